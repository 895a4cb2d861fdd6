#ifndef VERIDOC_CRDKAFKA_SHIM_H
#define VERIDOC_CRDKAFKA_SHIM_H

/* The librdkafka that `make setup` builds (scripts/librdkafka), not the
 * system's: a path relative to this header, so that no include path has to
 * be passed to every module that imports this one. */
#if __has_include("../../.build/librdkafka/include/librdkafka/rdkafka.h")
#include "../../.build/librdkafka/include/librdkafka/rdkafka.h"
#include "../../.build/librdkafka/include/librdkafka/rdkafka_mock.h" /* must follow rdkafka.h */
#else
#error "librdkafka 2.8 is not built yet: run `make setup` (scripts/librdkafka)"
#endif

/*
 * Swift cannot call variadic C functions nor expand function-like macros, so
 * rd_kafka_producev() with its RD_KAFKA_V_* argument macros is wrapped here.
 *
 * The payload and key are always copied (RD_KAFKA_MSG_F_COPY): Swift arrays
 * only lend their storage for the duration of the call.
 *
 * `headers` may be NULL. On success librdkafka owns `headers`; on failure the
 * caller still owns them and must rd_kafka_headers_destroy() them.
 * `opaque` comes back as rkmessage->_private in the delivery report.
 */
static inline rd_kafka_resp_err_t veridoc_rdk_produce(rd_kafka_t *rk,
                                                      const char *topic,
                                                      int32_t partition,
                                                      const void *key,
                                                      size_t key_len,
                                                      const void *value,
                                                      size_t value_len,
                                                      rd_kafka_headers_t *headers,
                                                      void *opaque) {
        if (headers)
                return rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_KEY((void *)key, key_len),
                    RD_KAFKA_V_VALUE((void *)value, value_len),
                    RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque),
                    RD_KAFKA_V_END);
        return rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_KEY((void *)key, key_len),
            RD_KAFKA_V_VALUE((void *)value, value_len),
            RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
}

/* Integer macros import into Swift as Int32; these keep the C types. */
static inline int32_t veridoc_rdk_partition_unassigned(void) {
        return RD_KAFKA_PARTITION_UA;
}
static inline int veridoc_rdk_purge_all(void) {
        return RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT;
}

#endif
