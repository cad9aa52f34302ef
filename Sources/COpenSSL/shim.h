#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/pkcs12.h>
/* EVP_PKEY_PUBLIC_KEY is a macro of macros, which Swift does not import. */
static const int COpenSSL_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
#endif
