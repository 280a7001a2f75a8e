// SPDX-License-Identifier: Apache-2.0
#include "CCurlShims.h"

CURLcode thumbd_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
