#ifndef VERIDOC_CEMBEDDEDFILES_H
#define VERIDOC_CEMBEDDEDFILES_H

#include <stddef.h>

/*
 * Files of the repository compiled into the binaries (embedded_files.c says
 * why through C). Each function returns the file's bytes, valid for the
 * life of the process, and writes their count.
 */

/* Schemas/session-api.openapi.json: the session API's contract, served by veridoc serve. */
const unsigned char *_Nonnull veridoc_embedded_session_api_openapi(size_t *_Nonnull count);
/* Sources/SessionAPI/veridoc-client.v1.js: the browser client serve hands out. */
const unsigned char *_Nonnull veridoc_embedded_client_js(size_t *_Nonnull count);
/* Schemas/reason-codes.md: what each reason code means, for the report. */
const unsigned char *_Nonnull veridoc_embedded_reason_codes(size_t *_Nonnull count);

/* Sources/DocumentTypes/catalogue/: the document types, one file per docType. */
size_t veridoc_embedded_catalogue_count(void);
/* The name and the bytes of the catalogue's file at `index` (< veridoc_embedded_catalogue_count()). */
const char *_Nonnull veridoc_embedded_catalogue_name(size_t index);
const unsigned char *_Nonnull veridoc_embedded_catalogue_file(size_t index, size_t *_Nonnull count);

#endif
