#ifndef CSHIMS_H
#define CSHIMS_H
/*
 * Typed, prefixed wrappers for variadic and macro C APIs that Swift cannot
 * call directly: curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt
 * (variadic) and a few OpenSSL macros. One wrapper per argument type, so the
 * Swift side never passes a value of the wrong C type through `...`.
 */
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/err.h>

/* ---- libcurl: global ---- */

/* curl_global_init(CURL_GLOBAL_DEFAULT); CURL_GLOBAL_DEFAULT is a macro. */
CURLcode CShims_curl_global_init_default(void);

/* ---- libcurl: curl_easy_setopt by argument type ---- */

/* For CURLOPTTYPE_LONG options (and CURLOPTTYPE_VALUES). */
CURLcode CShims_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
/* For CURLOPTTYPE_OBJECTPOINT / STRINGPOINT / SLISTPOINT / CBPOINT options. */
CURLcode CShims_curl_easy_setopt_ptr(CURL *handle, CURLoption option, const void *value);
/* For CURLOPTTYPE_OFF_T options (…_LARGE). */
CURLcode CShims_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
/* For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (same C signature). */
CURLcode CShims_curl_easy_setopt_func(CURL *handle, CURLoption option, curl_write_callback value);

/* For CURLOPT_SOCKOPTFUNCTION. */
CURLcode CShims_curl_easy_setopt_sockopt(CURL *handle, CURLoption option, curl_sockopt_callback value);
/* For CURLOPT_CLOSESOCKETFUNCTION. */
CURLcode CShims_curl_easy_setopt_closesocket(CURL *handle, CURLoption option, curl_closesocket_callback value);

/* For CURLOPT_PREREQFUNCTION (libcurl >= 7.80). */
CURLcode CShims_curl_easy_setopt_prereq(CURL *handle, CURLoption option, curl_prereq_callback value);
/* CURL_PREREQFUNC_OK / CURL_PREREQFUNC_ABORT. */
int CShims_CURL_PREREQFUNC_OK(void);
int CShims_CURL_PREREQFUNC_ABORT(void);

/* ---- sockets ---- */

/* The local and remote TCP ports of a connected socket (getsockname /
   getpeername); 0 on success, -1 if either call failed. */
int CShims_socket_ports(int fd, int *local_port, int *remote_port);

/* 1 if the kernel saw the peer reset the TCP connection (TCP_INFO state is
   TCP_CLOSE: an RST arrived), 0 if not, -1 if TCP_INFO failed. */
int CShims_tcp_peer_reset(int fd);

/* setsockopt(fd, IPPROTO_TCP, TCP_CORK, on): hold partial TCP segments while on,
   send what is held when turned off. Returns setsockopt's result. */
int CShims_tcp_cork(int fd, int on);

/* ---- libcurl: curl_easy_getinfo by result type ---- */

CURLcode CShims_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out);
CURLcode CShims_curl_easy_getinfo_ptr(CURL *handle, CURLINFO info, void **out);
CURLcode CShims_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out);
CURLcode CShims_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *out);

/* ---- libcurl: curl_multi_setopt by argument type ---- */

CURLMcode CShims_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/* The CURLcode of a CURLMSG_DONE message (a union member). */
CURLcode CShims_curl_msg_result(const CURLMsg *msg);

/* Macro constants. */
long CShims_CURLPIPE_MULTIPLEX(void);
long CShims_CURL_HTTP_VERSION_2TLS(void);

/* ---- OpenSSL macros ---- */

/* EVP_PKEY_EC / EVP_PKEY_RSA are macros aliasing NIDs. */
int CShims_EVP_PKEY_EC(void);
int CShims_EVP_PKEY_RSA(void);
/* OPENSSL_free is a macro around CRYPTO_free(ptr, __FILE__, __LINE__). */
void CShims_OPENSSL_free(void *ptr);

#endif
