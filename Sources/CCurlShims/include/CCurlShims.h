// SPDX-License-Identifier: Apache-2.0
// Non-variadic wrappers for libcurl's variadic setopt/getinfo calls, which Swift cannot call.
#pragma once
#include <curl/curl.h>

/// curl_easy_setopt for long-valued options.
CURLcode thumbd_curl_setopt_long(CURL *easy, CURLoption option, long value);
