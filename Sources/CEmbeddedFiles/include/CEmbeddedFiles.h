#ifndef VERIDOC_CEMBEDDEDFILES_H
#define VERIDOC_CEMBEDDEDFILES_H

#include <stddef.h>

/*
 * Files of the repository compiled into the binaries (embedded_files.c says
 * why through C), by index: these first, then the document-type catalogue.
 */
enum {
        /* Schemas/session-api.openapi.json: the session API's contract, served by veridoc serve. */
        VERIDOC_EMBEDDED_SESSION_API_OPENAPI,
        /* Sources/SessionAPI/veridoc-client.v1.js: the browser client serve hands out. */
        VERIDOC_EMBEDDED_CLIENT_JS,
        /* Schemas/reason-codes.md: what each reason code means, for the report. */
        VERIDOC_EMBEDDED_REASON_CODES,
        /* Sources/DocumentTypes/catalogue/: one file per docType, veridoc_embedded_catalogue_count() of them. */
        VERIDOC_EMBEDDED_CATALOGUE,
};

/* The bytes of the file at `index`, valid for the life of the process, and their count. */
const unsigned char *_Nonnull veridoc_embedded_file(size_t index, size_t *_Nonnull count);

size_t veridoc_embedded_catalogue_count(void);
/* The name of the catalogue's file VERIDOC_EMBEDDED_CATALOGUE + `index`. */
const char *_Nonnull veridoc_embedded_catalogue_name(size_t index);

#endif
