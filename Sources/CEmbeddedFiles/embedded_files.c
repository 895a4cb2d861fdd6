/*
 * C23's #embed puts a file's bytes into the object file as they are. SwiftPM's
 * own embedInCode writes a Swift array literal of one element per byte
 * instead, which the compiler checks and lowers element by element: the
 * session API's contract alone cost a debug build about 17 seconds.
 * Paths are relative to this file; clang lists each in the dependency file,
 * so a changed file rebuilds this one.
 */
#pragma clang diagnostic ignored "-Wc23-extensions"

#include "CEmbeddedFiles.h"

static const unsigned char session_api_openapi[] = {
#embed "../../Schemas/session-api.openapi.json"
};

static const unsigned char client_js[] = {
#embed "../SessionAPI/veridoc-client.v1.js"
};

static const unsigned char reason_codes[] = {
#embed "../../Schemas/reason-codes.md"
};

static const unsigned char catalogue_mdl[] = {
#embed "../DocumentTypes/catalogue/mdl.json"
};
static const unsigned char catalogue_photoid[] = {
#embed "../DocumentTypes/catalogue/photoid.json"
};
static const unsigned char catalogue_jp_mnc[] = {
#embed "../DocumentTypes/catalogue/jp-mnc.json"
};
static const unsigned char catalogue_eu_pid[] = {
#embed "../DocumentTypes/catalogue/eu-pid.json"
};
static const unsigned char catalogue_eu_av[] = {
#embed "../DocumentTypes/catalogue/eu-av.json"
};

static const struct {
        const char *name;
        const unsigned char *bytes;
        size_t count;
} catalogue[] = {
        {"mdl.json", catalogue_mdl, sizeof catalogue_mdl},
        {"photoid.json", catalogue_photoid, sizeof catalogue_photoid},
        {"jp-mnc.json", catalogue_jp_mnc, sizeof catalogue_jp_mnc},
        {"eu-pid.json", catalogue_eu_pid, sizeof catalogue_eu_pid},
        {"eu-av.json", catalogue_eu_av, sizeof catalogue_eu_av},
};

const unsigned char *veridoc_embedded_session_api_openapi(size_t *count) {
        *count = sizeof session_api_openapi;
        return session_api_openapi;
}

const unsigned char *veridoc_embedded_client_js(size_t *count) {
        *count = sizeof client_js;
        return client_js;
}

const unsigned char *veridoc_embedded_reason_codes(size_t *count) {
        *count = sizeof reason_codes;
        return reason_codes;
}

size_t veridoc_embedded_catalogue_count(void) {
        return sizeof catalogue / sizeof catalogue[0];
}

const char *veridoc_embedded_catalogue_name(size_t index) {
        return catalogue[index].name;
}

const unsigned char *veridoc_embedded_catalogue_file(size_t index, size_t *count) {
        *count = catalogue[index].count;
        return catalogue[index].bytes;
}
