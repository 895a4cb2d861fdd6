#ifndef VERIDOC_CCURL_SHIM_H
#define VERIDOC_CCURL_SHIM_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* Swift cannot call C's variadic functions: curl_easy_setopt and
   curl_easy_getinfo are reached through one typed wrapper per argument type. */

static inline CURLcode veridoc_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode veridoc_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/* libcurl copies strings it is given (since 7.17.0): the argument need only live for the call. */
static inline CURLcode veridoc_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode veridoc_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode veridoc_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION take callbacks of this one type. */
static inline CURLcode veridoc_curl_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode veridoc_curl_setopt_opensocket(CURL *handle, curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

static inline CURLcode veridoc_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* The string stays owned by the handle: copy it before the next transfer or cleanup. */
static inline CURLcode veridoc_curl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    char *pointer = NULL;
    CURLcode code = curl_easy_getinfo(handle, info, &pointer);
    *value = pointer;
    return code;
}

/* The IP address curl is about to connect to, as 4 or 16 bytes into `out`;
   returns their count, or 0 for any other kind of address. `addr` is declared
   as a struct sockaddr but curl stores the whole address behind it (a
   sockaddr_in6 is longer), which Swift's view of the struct would not reach. */
static inline int veridoc_curl_sockaddr_ip(const struct curl_sockaddr *address, unsigned char out[16]) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)&address->addr;
        memcpy(out, &v4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)&address->addr;
        memcpy(out, &v6->sin6_addr, 16);
        return 16;
    }
    return 0;
}

#endif
