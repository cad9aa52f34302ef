#ifndef CSHIMS_H
#define CSHIMS_H
#include <curl/curl.h>
#include <openssl/evp.h>
#endif
