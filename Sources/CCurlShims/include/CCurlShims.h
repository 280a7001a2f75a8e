// SPDX-License-Identifier: Apache-2.0
// Non-variadic wrappers for libcurl's variadic setopt/getinfo calls, which Swift cannot call
// ("Variadic function is unavailable"). One wrapper per argument type, not per option (like
// Foundation's CFURLSession_easy_setopt_*). None of them take ownership of anything: libcurl's
// own rules for each option apply (strings are copied by libcurl; callback data pointers are
// borrowed and must outlive the easy handle's use of them).
#pragma once
#include <curl/curl.h>

/// curl_easy_setopt for long-valued options (flags, timeouts in ms, counts).
CURLcode thumbd_curl_setopt_long(CURL *easy, CURLoption option, long value);

/// curl_easy_setopt for curl_off_t-valued options (CURLOPT_MAXFILESIZE_LARGE).
CURLcode thumbd_curl_setopt_off(CURL *easy, CURLoption option, curl_off_t value);

/// curl_easy_setopt for pointer-valued options: strings (copied by libcurl), `struct curl_slist *`
/// (borrowed: the caller frees it after the transfer), CURLOPT_ERRORBUFFER (borrowed, at least
/// CURL_ERROR_SIZE bytes, must outlive the handle's transfers), and callback data (borrowed).
CURLcode thumbd_curl_setopt_ptr(CURL *easy, CURLoption option, void *value);

/// curl_easy_setopt(CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION, fn): function pointers
/// cannot travel through `void *` portably, hence a dedicated wrapper.
CURLcode thumbd_curl_setopt_writefn(CURL *easy, CURLoption option, curl_write_callback fn);

/// curl_easy_setopt(CURLOPT_OPENSOCKETFUNCTION, fn).
CURLcode thumbd_curl_setopt_opensocketfn(CURL *easy, curl_opensocket_callback fn);

/// curl_easy_getinfo for long results (response code, OS errno, redirect count).
CURLcode thumbd_curl_getinfo_long(CURL *easy, CURLINFO info, long *out);

/// curl_easy_getinfo for curl_off_t results (content length).
CURLcode thumbd_curl_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *out);

/// curl_easy_getinfo for string/pointer results. `*out` is borrowed from the handle: valid until
/// the next transfer on it or its cleanup; copy it before then.
CURLcode thumbd_curl_getinfo_ptr(CURL *easy, CURLINFO info, void **out);

/// curl_multi_setopt for long-valued options.
CURLMcode thumbd_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The `CURLMsg.data.result` member: the anonymous union does not import into Swift readably.
/// `msg` is borrowed from curl_multi_info_read (valid until the next multi call).
CURLcode thumbd_curl_msg_result(const CURLMsg *msg);

/// curl_multi_setopt for pointer-valued options (CURLMOPT_SOCKETDATA / CURLMOPT_TIMERDATA:
/// borrowed, must outlive the multi handle's use of them).
CURLMcode thumbd_curl_multi_setopt_ptr(CURLM *multi, CURLMoption option, void *value);

/// curl_multi_setopt(CURLMOPT_SOCKETFUNCTION, fn): libcurl tells which sockets to watch.
CURLMcode thumbd_curl_multi_setopt_sockfn(CURLM *multi, curl_socket_callback fn);

/// curl_multi_setopt(CURLMOPT_TIMERFUNCTION, fn): libcurl tells when to call it back on timeout.
CURLMcode thumbd_curl_multi_setopt_timerfn(CURLM *multi, curl_multi_timer_callback fn);
