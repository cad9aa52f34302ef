/* Typed wrappers for variadic and macro C APIs (curl_easy_setopt, OpenSSL macros). */
#include "CShims.h"
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

CURLcode CShims_curl_global_init_default(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

CURLcode CShims_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode CShims_curl_easy_setopt_ptr(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode CShims_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode CShims_curl_easy_setopt_func(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CShims_curl_easy_setopt_sockopt(CURL *handle, CURLoption option, curl_sockopt_callback value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode CShims_curl_easy_setopt_closesocket(CURL *handle, CURLoption option, curl_closesocket_callback value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CShims_curl_easy_setopt_prereq(CURL *handle, CURLoption option, curl_prereq_callback value) {
    return curl_easy_setopt(handle, option, value);
}
int CShims_CURL_PREREQFUNC_OK(void) { return CURL_PREREQFUNC_OK; }
int CShims_CURL_PREREQFUNC_ABORT(void) { return CURL_PREREQFUNC_ABORT; }

static int port_of(const struct sockaddr_storage *address) {
    if (address->ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)address)->sin_port);
    if (address->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    return 0;
}

int CShims_socket_ports(int fd, int *local_port, int *remote_port) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    *local_port = port_of(&address);
    length = sizeof address;
    if (getpeername(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    *remote_port = port_of(&address);
    return 0;
}

int CShims_tcp_peer_reset(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    return info.tcpi_state == TCP_CLOSE ? 1 : 0;
}

int CShims_tcp_cork(int fd, int on) {
    return setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

CURLcode CShims_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}
CURLcode CShims_curl_easy_getinfo_ptr(CURL *handle, CURLINFO info, void **out) {
    return curl_easy_getinfo(handle, info, out);
}
CURLcode CShims_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}
CURLcode CShims_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLMcode CShims_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLcode CShims_curl_msg_result(const CURLMsg *msg) { return msg->data.result; }

long CShims_CURLPIPE_MULTIPLEX(void) { return CURLPIPE_MULTIPLEX; }
long CShims_CURL_HTTP_VERSION_2TLS(void) { return CURL_HTTP_VERSION_2TLS; }

int CShims_EVP_PKEY_EC(void) { return EVP_PKEY_EC; }
int CShims_EVP_PKEY_RSA(void) { return EVP_PKEY_RSA; }
void CShims_OPENSSL_free(void *ptr) { OPENSSL_free(ptr); }
