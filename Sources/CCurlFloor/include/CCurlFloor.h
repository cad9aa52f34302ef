#ifndef CCURLFLOOR_H
#define CCURLFLOOR_H
/*
 * The libcurl floor for `pushfleet bench send --floor`: a minimal C loop over
 * libcurl's multi interface (curl_floor.c), so the benchmark can compare our
 * client's CPU per request with libcurl's own. Bench support only: nothing
 * in the worker links it.
 */
#include <curl/curl.h>

typedef struct {
    long succeeded;      /* measured requests answered 2xx */
    long failed;         /* measured requests that failed or got another status */
    double seconds;      /* wall time of the measured requests */
    double cpu_seconds;  /* this process's CPU (user + system) over them */
    char error[256];     /* why set-up failed, when the call returns -1 */
} CCurlFloor_result;

/* `warmup` unmeasured requests, then `count` measured ones, all the same POST
   of `body` to `url` with `header_lines` ("name: value"), keeping `in_flight`
   requests in flight over at most `connections` HTTP/2 connections of at most
   `streams` streams each. Returns 0, or -1 with result->error set. Blocks. */
int CCurlFloor_run(const char *url, const char *const *header_lines, int header_count,
                   const char *body, long body_length, long count, long warmup,
                   long connections, long streams, long in_flight, const char *ca_path,
                   CCurlFloor_result *result);

#endif
