// SPDX-License-Identifier: Apache-2.0
// See CCurlShims.h: why each wrapper exists and who owns what.
#include "CCurlShims.h"

CURLcode thumbd_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode thumbd_curl_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode thumbd_curl_setopt_ptr(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode thumbd_curl_setopt_writefn(CURL *easy, CURLoption option, curl_write_callback fn) {
    return curl_easy_setopt(easy, option, fn);
}

CURLcode thumbd_curl_setopt_opensocketfn(CURL *easy, curl_opensocket_callback fn) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, fn);
}

CURLcode thumbd_curl_getinfo_long(CURL *easy, CURLINFO info, long *out) {
    return curl_easy_getinfo(easy, info, out);
}

CURLcode thumbd_curl_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(easy, info, out);
}

CURLcode thumbd_curl_getinfo_ptr(CURL *easy, CURLINFO info, void **out) {
    return curl_easy_getinfo(easy, info, out);
}

CURLMcode thumbd_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLcode thumbd_curl_msg_result(const CURLMsg *msg) {
    return msg->data.result;
}

CURLMcode thumbd_curl_multi_setopt_ptr(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode thumbd_curl_multi_setopt_sockfn(CURLM *multi, curl_socket_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, fn);
}

CURLMcode thumbd_curl_multi_setopt_timerfn(CURLM *multi, curl_multi_timer_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, fn);
}
