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
 * Starts a daemon whose `io_threads` threads (at least one) each wait on
 * their own epoll set and move the bytes of their connections, bound to
 * `port` on every IPv4 address (`loopback_only` != 0: 127.0.0.1 only).
 * Port 0 binds an ephemeral port; read it back with veridoc_mhd_bound_port. `completed` is called once
 * per request when it ends, however it ends, so the per-request state the
 * handler keeps in *con_cls is freed deterministically. `uri_log` sees the
 * request target as sent (before libmicrohttpd splits and decodes it) and
 * returns the request's initial *con_cls. `notify` is told when a connection
 * starts and closes (before its socket is closed), with a per-connection
 * pointer of its own. `per_address_limit` caps the connections of one client
 * address (0: no cap). With `key_pem` and `cert_pem` (both or neither), the
 * daemon speaks HTTPS only (GnuTLS); the two strings must stay valid while
 * the daemon runs. NULL on failure (errno tells why, e.g. EADDRINUSE).
 */
static inline struct MHD_Daemon *veridoc_mhd_start(uint16_t port, int loopback_only,
                                                   MHD_AccessHandlerCallback handler, void *cls,
                                                   MHD_RequestCompletedCallback completed,
                                                   void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                                   MHD_NotifyConnectionCallback notify,
                                                   unsigned int connection_limit,
                                                   unsigned int per_address_limit,
                                                   unsigned int timeout_seconds,
                                                   unsigned int io_threads,
                                                   const char *key_pem, const char *cert_pem) {
        struct sockaddr_in address;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
        /*
         * epoll: a connection costs no thread, whatever it waits for; a
         * handler that blocks runs elsewhere while its connection is
         * suspended (MHD_ALLOW_SUSPEND_RESUME). MHD_USE_ITC: a connection
         * resumed from another thread is picked up at once, and
         * MHD_quiesce_daemon can stop accepting while the requests under way
         * finish (a drain).
         */
        unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
        int tls = key_pem != NULL && cert_pem != NULL;
        struct MHD_OptionItem options[12];
        size_t count = 0;
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &address};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)per_address_limit, NULL};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout_seconds, NULL};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, cls};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_log, cls};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, cls};
        /* Refuses what RFC 9112 calls invalid (e.g. HTTP/1.1 without Host, blanks in the target). */
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL};
        /* libmicrohttpd refuses a pool of one thread: one is the polling thread alone. */
        if (io_threads > 1)
                options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)io_threads, NULL};
        if (tls) {
                options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem};
                options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert_pem};
        }
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        return MHD_start_daemon(flags | (tls ? MHD_USE_TLS : 0), port, NULL, NULL, handler, cls,
                                MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* The socket of a connection (-1 if unknown): for shutdown(2) by the guard, never close(2). */
static inline int veridoc_mhd_connection_fd(struct MHD_Connection *connection) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        return info ? info->connect_fd : -1;
}

/* The pointer the connection-notify callback keeps for this connection (NULL if none). */
static inline void *veridoc_mhd_socket_context(struct MHD_Connection *connection) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return info ? info->socket_context : NULL;
}

/* Whether this libmicrohttpd was built with TLS. */
static inline int veridoc_mhd_supports_tls(void) {
        return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

/* Adds the headers, queues the response and lets go of it (the queue holds it now). */
static inline enum MHD_Result veridoc_mhd_queue_with_headers(struct MHD_Connection *connection, unsigned int status,
                                                             struct MHD_Response *response,
                                                             const char *const *names, const char *const *values, size_t count) {
        for (size_t i = 0; i < count; i++)
                MHD_add_response_header(response, names[i], values[i]);
        enum MHD_Result result = MHD_queue_response(connection, status, response);
        MHD_destroy_response(response);
        return result;
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
        return veridoc_mhd_queue_with_headers(connection, status, response, names, values, count);
}

/*
 * Queues a response whose body `reader` makes as it goes (chunked, no
 * length), for server-sent events; `release` frees `cls` when the response
 * is done with.
 */
static inline enum MHD_Result veridoc_mhd_respond_stream(struct MHD_Connection *connection, unsigned int status,
                                                         const char *const *names, const char *const *values, size_t count,
                                                         MHD_ContentReaderCallback reader, void *cls,
                                                         MHD_ContentReaderFreeCallback release) {
        struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, cls, release);
        if (response == NULL) {
                release(cls);
                return MHD_NO;
        }
        return veridoc_mhd_queue_with_headers(connection, status, response, names, values, count);
}

/* What a content reader returns to end the body. */
static inline ssize_t veridoc_mhd_end_of_stream(void) {
        return MHD_CONTENT_READER_END_OF_STREAM;
}

#endif
