#ifndef VERIDOC_COPENSSL_SHIM_H
#define VERIDOC_COPENSSL_SHIM_H

#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/obj_mac.h>
#include <openssl/bio.h>

/*
 * OSSL_PARAM keeps the `const char *` key it is given. String macros import
 * into Swift as temporary Strings, so every parameter name crosses the
 * boundary through these functions, which return static storage.
 */
static inline const char *veridoc_param_group_name(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *veridoc_param_pub_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *veridoc_param_priv_key(void) { return OSSL_PKEY_PARAM_PRIV_KEY; }
static inline const char *veridoc_param_kdf_mode(void) { return OSSL_KDF_PARAM_MODE; }
static inline const char *veridoc_param_kdf_digest(void) { return OSSL_KDF_PARAM_DIGEST; }
static inline const char *veridoc_param_kdf_key(void) { return OSSL_KDF_PARAM_KEY; }
static inline const char *veridoc_param_kdf_salt(void) { return OSSL_KDF_PARAM_SALT; }
static inline const char *veridoc_param_kdf_info(void) { return OSSL_KDF_PARAM_INFO; }
static inline const char *veridoc_param_mac_digest(void) { return OSSL_MAC_PARAM_DIGEST; }

/* Computed macros do not import into Swift. */
static inline int veridoc_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int veridoc_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int veridoc_selection_key_parameters(void) { return EVP_PKEY_KEY_PARAMETERS; }

/*
 * The per-event EC work (one ECDH, two ECDSA verifies with keys seen once)
 * goes through OpenSSL's EC_KEY functions, deprecated since 3.0 but present
 * throughout 3.x. In 3.0 every provider-side EVP_PKEY and EVP_PKEY_CTX made
 * for a fresh key walks the provider name map (EVP_KEYMGMT_names_do_all): a
 * quarter of an ECDSA verify and half of an ECDH measured here. These
 * wrappers keep the deprecated calls in one place, out of Swift's warnings.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* A public EC_KEY on `group` from a SEC 1 point; NULL if it is not a point
 * of the group (coordinates ≥ p, off the curve, or the wrong length). */
static inline EC_KEY *veridoc_ec_key_from_point(const EC_GROUP *group, const unsigned char *point, size_t length) {
    EC_KEY *key = EC_KEY_new();
    if (key == NULL) return NULL;
    if (EC_KEY_set_group(key, group) != 1 || EC_KEY_oct2key(key, point, length, NULL) != 1) {
        EC_KEY_free(key);
        return NULL;
    }
    return key;
}

/* The EC_KEY behind an EC EVP_PKEY (a counted reference), or NULL. */
static inline EC_KEY *veridoc_ec_key_from_pkey(EVP_PKEY *pkey) { return EVP_PKEY_get1_EC_KEY(pkey); }

static inline void veridoc_ec_key_free(EC_KEY *key) { EC_KEY_free(key); }

/* ECDSA over a precomputed digest with the COSE signature r ‖ s, each
 * `width` bytes: 1 valid, 0 invalid, -1 error. */
static inline int veridoc_ecdsa_verify(const unsigned char *digest, int digest_length,
                                       const unsigned char *r, const unsigned char *s, int width, EC_KEY *key) {
    ECDSA_SIG *signature = ECDSA_SIG_new();
    if (signature == NULL) return -1;
    BIGNUM *rn = BN_bin2bn(r, width, NULL);
    BIGNUM *sn = BN_bin2bn(s, width, NULL);
    if (rn == NULL || sn == NULL || ECDSA_SIG_set0(signature, rn, sn) != 1) {
        BN_free(rn);
        BN_free(sn);
        ECDSA_SIG_free(signature);
        return -1;
    }
    int result = ECDSA_do_verify(digest, digest_length, signature, key);
    ECDSA_SIG_free(signature);
    return result;
}

/* ECDH: the x coordinate of d · Q into `out` (the coordinate length); the
 * number of bytes written, or -1. */
static inline int veridoc_ecdh(unsigned char *out, size_t out_length, const EC_KEY *peer, const EC_KEY *own) {
    const EC_POINT *point = EC_KEY_get0_public_key(peer);
    if (point == NULL) return -1;
    return ECDH_compute_key(out, out_length, point, own, NULL);
}

#pragma GCC diagnostic pop

#endif
