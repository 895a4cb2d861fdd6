#ifndef VERIDOC_CMICROHTTPD_SHIM_H
#define VERIDOC_CMICROHTTPD_SHIM_H

/* microhttpd.h expects these first (its MHD_PLATFORM_H contract). */
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>
#include <microhttpd.h>

/*
 * Swift cannot call variadic C functions, so MHD_start_daemon and
 * MHD_get_daemon_info are wrapped here with the few options Veridoc uses.
 */

/* The port the daemon listens on (the chosen one when started with port 0); 0 if unknown. */
static inline uint16_t veridoc_mhd_bound_port(struct MHD_Daemon *daemon) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
        return info ? info->port : 0;
}

/*
 * Starts a daemon with its own polling thread and one thread per connection
 * (a slow client never holds up a probe), bound to `port` on every IPv4
 * address (`loopback_only` != 0: 127.0.0.1 only). Port 0 binds an ephemeral
 * port; read it back with veridoc_mhd_bound_port. `completed` is called once
 * per request when it ends, however it ends, so the per-request state the
 * handler keeps in *con_cls is freed deterministically. With `key_pem` and
 * `cert_pem` (both or neither), the daemon speaks HTTPS only (GnuTLS); the
 * two strings must stay valid while the daemon runs. NULL on failure
 * (errno tells why, e.g. EADDRINUSE).
 */
static inline struct MHD_Daemon *veridoc_mhd_start(uint16_t port, int loopback_only,
                                                   MHD_AccessHandlerCallback handler, void *cls,
                                                   MHD_RequestCompletedCallback completed,
                                                   unsigned int connection_limit,
                                                   unsigned int timeout_seconds,
                                                   const char *key_pem, const char *cert_pem) {
        struct sockaddr_in address;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
        unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
        if (key_pem != NULL && cert_pem != NULL) {
                return MHD_start_daemon(flags | MHD_USE_TLS, port, NULL, NULL, handler, cls,
                                        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                        MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                                        MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                        MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
                                        MHD_OPTION_END);
        }
        return MHD_start_daemon(flags, port, NULL, NULL, handler, cls,
                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                                MHD_OPTION_END);
}

/* Whether this libmicrohttpd was built with TLS. */
static inline int veridoc_mhd_supports_tls(void) {
        return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

/*
 * Queues one complete response (the body is copied) with `count` headers
 * given as parallel arrays of names and values.
 */
static inline enum MHD_Result veridoc_mhd_respond(struct MHD_Connection *connection, unsigned int status,
                                                  const void *body, size_t length,
                                                  const char *const *names, const char *const *values,
                                                  size_t count) {
        struct MHD_Response *response =
            MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
        if (response == NULL)
                return MHD_NO;
        for (size_t i = 0; i < count; i++)
                MHD_add_response_header(response, names[i], values[i]);
        enum MHD_Result result = MHD_queue_response(connection, status, response);
        MHD_destroy_response(response);
        return result;
}

#endif
