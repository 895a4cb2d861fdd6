#ifndef VERIDOC_CRDKAFKA_SHIM_H
#define VERIDOC_CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h> /* must follow rdkafka.h */

#endif
