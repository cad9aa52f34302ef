/* Typed wrappers for variadic and macro C APIs (curl_easy_setopt, OpenSSL macros). */
#include "CShims.h"
