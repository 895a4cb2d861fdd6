#ifndef VERIDOC_CLIBPQ_SHIM_H
#define VERIDOC_CLIBPQ_SHIM_H

#include <libpq-fe.h>

#endif
