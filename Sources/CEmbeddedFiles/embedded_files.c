/*
 * C23's #embed puts a file's bytes into the object file as they are. SwiftPM's
 * own embedInCode writes a Swift array literal of one element per byte
 * instead, which the compiler checks and lowers element by element, slowly
 * for a file the size of the session API's contract.
 * Paths are relative to this file; clang lists each in the dependency file,
 * so a changed file rebuilds this one.
 */
#pragma clang diagnostic ignored "-Wc23-extensions"

#include <string.h>
#include "CEmbeddedFiles.h"

/* Every file in the header's order, each ended by a NUL byte: they are text, which holds none. */
static const unsigned char files[] = {
#embed "../../Schemas/session-api.openapi.json" suffix(, 0,)
#embed "../SessionAPI/veridoc-client.v1.js" suffix(, 0,)
#embed "../../Schemas/reason-codes.md" suffix(, 0,)
#embed "../DocumentTypes/catalogue/mdl.json" suffix(, 0,)
#embed "../DocumentTypes/catalogue/photoid.json" suffix(, 0,)
#embed "../DocumentTypes/catalogue/jp-mnc.json" suffix(, 0,)
#embed "../DocumentTypes/catalogue/eu-pid.json" suffix(, 0,)
#embed "../DocumentTypes/catalogue/eu-av.json" suffix(, 0,)
};

/* The catalogue's files above, in their order. */
static const char *const catalogue_names[] = {"mdl.json", "photoid.json", "jp-mnc.json", "eu-pid.json", "eu-av.json"};

const unsigned char *veridoc_embedded_file(size_t index, size_t *count) {
        const unsigned char *start = files;
        const unsigned char *end = files + sizeof files;
        for (size_t skipped = 0; skipped < index && start < end; skipped++) {
                const unsigned char *nul = memchr(start, 0, (size_t)(end - start));
                start = nul == NULL ? end : nul + 1;
        }
        /* Past the last file: nothing (the enum and the array disagree; EmbeddedFilesTests says so). */
        if (start >= end) {
                *count = 0;
                return end;
        }
        *count = strlen((const char *)start);
        return start;
}

size_t veridoc_embedded_catalogue_count(void) {
        return sizeof catalogue_names / sizeof catalogue_names[0];
}

const char *veridoc_embedded_catalogue_name(size_t index) {
        return catalogue_names[index];
}
