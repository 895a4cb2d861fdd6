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


#endif
