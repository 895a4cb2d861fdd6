#ifndef VERIDOC_CZLIB_SHIM_H
#define VERIDOC_CZLIB_SHIM_H

#include <zlib.h>

#endif
