/*
 * The libcurl floor for `pushfleet bench send --floor`: the least a program
 * can do per request with libcurl's multi interface, written the way a
 * careful C programmer would, so the benchmark can print how far our Swift
 * client is from libcurl's own cost.
 *
 * One multi handle; `in_flight` easy handles configured once and reused
 * (curl_multi_remove_handle + curl_multi_add_handle per request); one shared
 * header list; the body from memory (CURLOPT_POSTFIELDS, not copied); the
 * answer discarded; curl_multi_perform + curl_multi_poll. No callbacks other
 * than the write sink, no per-request allocation of our own.
 */
#include "CCurlFloor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

static size_t floor_discard(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

static double floor_cpu_seconds(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6
         + (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static double floor_wall_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Runs `total` requests (the first `warmup` of them unmeasured) and fills
   `result`; returns 0, or -1 if set-up failed (result->error says what). */
static int floor_loop(CURLM *multi, CURL **handles, long in_flight, long total, long warmup,
                      CCurlFloor_result *result) {
    long started = 0, finished = 0;
    double cpu0 = 0, wall0 = 0;
    if (warmup == 0) { cpu0 = floor_cpu_seconds(); wall0 = floor_wall_seconds(); }
    for (long i = 0; i < in_flight && started < total; i++, started++) {
        if (curl_multi_add_handle(multi, handles[i]) != CURLM_OK) {
            snprintf(result->error, sizeof result->error, "curl_multi_add_handle failed");
            return -1;
        }
    }
    while (finished < total) {
        int running = 0;
        if (curl_multi_perform(multi, &running) != CURLM_OK) {
            snprintf(result->error, sizeof result->error, "curl_multi_perform failed");
            return -1;
        }
        CURLMsg *msg;
        int queued;
        while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *easy = msg->easy_handle;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (finished >= warmup) {
                if (msg->data.result == CURLE_OK && status >= 200 && status < 300) result->succeeded++;
                else result->failed++;
            }
            finished++;
            if (finished == warmup) { cpu0 = floor_cpu_seconds(); wall0 = floor_wall_seconds(); }
            curl_multi_remove_handle(multi, easy);
            if (started < total) {
                curl_multi_add_handle(multi, easy);
                started++;
            }
        }
        if (finished >= total) break;
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    result->seconds = floor_wall_seconds() - wall0;
    result->cpu_seconds = floor_cpu_seconds() - cpu0;
    return 0;
}

int CCurlFloor_run(const char *url, const char *const *header_lines, int header_count,
                   const char *body, long body_length, long count, long warmup,
                   long connections, long streams, long in_flight, const char *ca_path,
                   CCurlFloor_result *result) {
    memset(result, 0, sizeof *result);
    if (in_flight < 1 || count < 1 || warmup < 0) {
        snprintf(result->error, sizeof result->error, "count and in_flight must be positive");
        return -1;
    }
    CURLM *multi = curl_multi_init();
    if (multi == NULL) {
        snprintf(result->error, sizeof result->error, "curl_multi_init failed");
        return -1;
    }
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, streams);

    struct curl_slist *headers = NULL;
    for (int i = 0; i < header_count; i++) {
        struct curl_slist *next = curl_slist_append(headers, header_lines[i]);
        if (next == NULL) {
            curl_slist_free_all(headers);
            curl_multi_cleanup(multi);
            snprintf(result->error, sizeof result->error, "curl_slist_append failed");
            return -1;
        }
        headers = next;
    }
    CURL **handles = calloc((size_t)in_flight, sizeof(CURL *));
    int rc = handles == NULL ? -1 : 0;
    for (long i = 0; rc == 0 && i < in_flight; i++) {
        CURL *easy = curl_easy_init();
        if (easy == NULL) { rc = -1; break; }
        handles[i] = easy;
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, body_length);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, floor_discard);
        if (ca_path != NULL) curl_easy_setopt(easy, CURLOPT_CAINFO, ca_path);
    }
    if (rc != 0) snprintf(result->error, sizeof result->error, "curl_easy_init failed");
    else rc = floor_loop(multi, handles, in_flight, count + warmup, warmup, result);

    for (long i = 0; handles != NULL && i < in_flight; i++) {
        if (handles[i] == NULL) continue;
        curl_multi_remove_handle(multi, handles[i]);
        curl_easy_cleanup(handles[i]);
    }
    free(handles);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    return rc;
}
