#ifndef VERIDOC_CLIBPQ_SHIM_H
#define VERIDOC_CLIBPQ_SHIM_H

#include <libpq-fe.h>
#include <postgres_ext.h>

/* PG_DIAG_* are character macros ('C', 'M', 'n', ...); wrapping them keeps the
   Swift side free of magic numbers and of guesses about how they import. */
static inline const char *veridoc_pq_sqlstate(const PGresult *res) {
    return PQresultErrorField(res, PG_DIAG_SQLSTATE);
}
static inline const char *veridoc_pq_message_primary(const PGresult *res) {
    return PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
}
static inline const char *veridoc_pq_constraint_name(const PGresult *res) {
    return PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
}
static inline const char *veridoc_pq_table_name(const PGresult *res) {
    return PQresultErrorField(res, PG_DIAG_TABLE_NAME);
}

/* Notices (RAISE NOTICE, "relation already exists, skipping") would otherwise be
   printed to stderr by libpq's default processor, and they can carry values. */
static void veridoc_pq_drop_notice(void *arg, const char *message) {
    (void)arg; (void)message;
}
static inline void veridoc_pq_silence_notices(PGconn *conn) {
    PQsetNoticeProcessor(conn, veridoc_pq_drop_notice, NULL);
}

#endif
