#ifndef VERIDOC_CCURL_SHIM_H
#define VERIDOC_CCURL_SHIM_H

#include <curl/curl.h>

#endif
