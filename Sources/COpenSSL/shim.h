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
#include <openssl/sha.h>
#include <openssl/decoder.h>
#include <string.h>

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

/* Builds `group`'s table of multiples of its generator: 1 if a table is in
 * place afterwards, 0 otherwise. Deprecated in 3.0 with the rest of the
 * explicit precomputation API, which the EC_GROUP still honours. */
static inline int veridoc_ec_group_precompute_mult(EC_GROUP *group, BN_CTX *ctx) {
    return EC_GROUP_precompute_mult(group, ctx) == 1 && EC_GROUP_have_precompute_mult(group) == 1;
}

/* The Jacobian coordinates of `point` on a prime-field group (x = X/Z²,
 * y = Y/Z³), decoded from the method's Montgomery form; any output may be
 * NULL. Deprecated in 3.0 with the other GFp-specific point accessors. */
static inline int veridoc_ec_point_jacobian(const EC_GROUP *group, const EC_POINT *point,
                                            BIGNUM *x, BIGNUM *y, BIGNUM *z, BN_CTX *ctx) {
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, y, z, ctx);
}

/* ECDH: the x coordinate of d · Q into `out` (the coordinate length); the
 * number of bytes written, or -1. */
static inline int veridoc_ecdh(unsigned char *out, size_t out_length, const EC_KEY *peer, const EC_KEY *own) {
    const EC_POINT *point = EC_KEY_get0_public_key(peer);
    if (point == NULL) return -1;
    return ECDH_compute_key(out, out_length, point, own, NULL);
}

/* ECDH with a peer point used once (HPKE's encapsulated key): the SEC 1
 * point is decoded straight onto `own`'s group, with no EC_KEY (which would
 * copy the group) around it. Bytes written, -2 if the bytes are not a point
 * of the group (EC_POINT_oct2point checks that it is on the curve), -1 on
 * any other failure. */
static inline int veridoc_ecdh_with_point(unsigned char *out, size_t out_length,
                                          const unsigned char *point, size_t point_length, const EC_KEY *own) {
    const EC_GROUP *group = EC_KEY_get0_group(own);
    if (group == NULL) return -1;
    EC_POINT *peer = EC_POINT_new(group);
    if (peer == NULL) return -1;
    if (EC_POINT_oct2point(group, peer, point, point_length, NULL) != 1) {
        EC_POINT_free(peer);
        return -2;
    }
    int written = ECDH_compute_key(out, out_length, peer, own, NULL);
    EC_POINT_free(peer);
    return written;
}

/*
 * SHA-2, HMAC (RFC 2104) and HKDF-Expand (RFC 5869) on OpenSSL's SHA-2 block
 * functions, deprecated since 3.0 but present throughout 3.x. Through EVP each
 * digest allocated and initialised a provider context, and each HMAC copied
 * and re-keyed three digest contexts: for the 32–200-byte inputs of a value
 * digest or an HPKE key schedule that cost several times the hashing itself.
 * Everything here lives on the caller's stack; keyed states and intermediate
 * blocks are cleansed before returning. `bits` is 256, 384 or 512.
 */
typedef union {
    SHA256_CTX sha256;
    SHA512_CTX sha512; /* also SHA-384 */
} veridoc_sha2_ctx;

/* An HMAC key: the hash states after absorbing key ⊕ ipad and key ⊕ opad. */
typedef struct {
    veridoc_sha2_ctx inner;
    veridoc_sha2_ctx outer;
    int bits;
} veridoc_hmac_key;

static inline int veridoc_sha2_init(veridoc_sha2_ctx *c, int bits) {
    switch (bits) {
    case 256: return SHA256_Init(&c->sha256);
    case 384: return SHA384_Init(&c->sha512);
    case 512: return SHA512_Init(&c->sha512);
    default: return 0;
    }
}

static inline int veridoc_sha2_update(veridoc_sha2_ctx *c, int bits, const void *data, size_t length) {
    if (length == 0) return 1;
    return bits == 256 ? SHA256_Update(&c->sha256, data, length) : SHA512_Update(&c->sha512, data, length);
}

static inline int veridoc_sha2_final(veridoc_sha2_ctx *c, int bits, unsigned char *out) {
    switch (bits) {
    case 256: return SHA256_Final(out, &c->sha256);
    case 384: return SHA384_Final(out, &c->sha512);
    case 512: return SHA512_Final(out, &c->sha512);
    default: return 0;
    }
}

/* The digest of public data into `out` (bits / 8 bytes): 1 on success. */
static inline int veridoc_sha2(int bits, const void *data, size_t length, unsigned char *out) {
    veridoc_sha2_ctx c;
    return veridoc_sha2_init(&c, bits) && veridoc_sha2_update(&c, bits, data, length) && veridoc_sha2_final(&c, bits, out);
}

static inline int veridoc_hmac_key_init(veridoc_hmac_key *k, int bits, const unsigned char *key, size_t length) {
    unsigned char block[128];
    size_t block_length = bits == 256 ? 64 : 128;
    int ok = 1;
    memset(block, 0, sizeof block);
    k->bits = bits;
    if (length > block_length) {
        veridoc_sha2_ctx c;
        ok = veridoc_sha2_init(&c, bits) && veridoc_sha2_update(&c, bits, key, length) && veridoc_sha2_final(&c, bits, block);
        OPENSSL_cleanse(&c, sizeof c);
    } else if (length > 0) {
        memcpy(block, key, length);
    }
    for (size_t i = 0; i < block_length; i++) block[i] ^= 0x36;
    ok = ok && veridoc_sha2_init(&k->inner, bits) && veridoc_sha2_update(&k->inner, bits, block, block_length);
    for (size_t i = 0; i < block_length; i++) block[i] ^= 0x36 ^ 0x5c;
    ok = ok && veridoc_sha2_init(&k->outer, bits) && veridoc_sha2_update(&k->outer, bits, block, block_length);
    OPENSSL_cleanse(block, sizeof block);
    return ok;
}

/* Completes a MAC begun as a copy of k->inner: out = H(outer ‖ H(inner ‖ data)). */
static inline int veridoc_hmac_finish(const veridoc_hmac_key *k, veridoc_sha2_ctx *work, unsigned char *out) {
    unsigned char inner[64];
    int ok = veridoc_sha2_final(work, k->bits, inner);
    *work = k->outer;
    ok = ok && veridoc_sha2_update(work, k->bits, inner, (size_t)k->bits / 8) && veridoc_sha2_final(work, k->bits, out);
    OPENSSL_cleanse(inner, sizeof inner);
    return ok;
}

/* HMAC into `out` (bits / 8 bytes): 1 on success. */
static inline int veridoc_hmac(int bits, const unsigned char *key, size_t key_length,
                               const void *data, size_t data_length, unsigned char *out) {
    veridoc_hmac_key k;
    veridoc_sha2_ctx work;
    int ok = veridoc_hmac_key_init(&k, bits, key, key_length);
    work = k.inner;
    ok = ok && veridoc_sha2_update(&work, bits, data, data_length) && veridoc_hmac_finish(&k, &work, out);
    OPENSSL_cleanse(&work, sizeof work);
    OPENSSL_cleanse(&k, sizeof k);
    return ok;
}

/* HKDF-Expand: T(1) ‖ T(2) ‖ … truncated to out_length (≤ 255 · bits / 8,
 * checked by the caller), keying HMAC with the PRK once for every block. */
static inline int veridoc_hkdf_expand(int bits, const unsigned char *prk, size_t prk_length,
                                      const unsigned char *info, size_t info_length,
                                      unsigned char *out, size_t out_length) {
    veridoc_hmac_key k;
    veridoc_sha2_ctx work;
    unsigned char block[64];
    size_t hash_length = (size_t)bits / 8, done = 0;
    unsigned char counter = 1;
    int ok = veridoc_hmac_key_init(&k, bits, prk, prk_length);
    while (ok && done < out_length) {
        size_t n = out_length - done < hash_length ? out_length - done : hash_length;
        work = k.inner;
        ok = (done == 0 || veridoc_sha2_update(&work, bits, block, hash_length))
            && veridoc_sha2_update(&work, bits, info, info_length)
            && veridoc_sha2_update(&work, bits, &counter, 1)
            && veridoc_hmac_finish(&k, &work, block);
        if (ok) memcpy(out + done, block, n);
        done += n;
        counter++;
    }
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(&work, sizeof work);
    OPENSSL_cleanse(&k, sizeof k);
    return ok;
}

#pragma GCC diagnostic pop

/*
 * One unencrypted PEM private key from `bio`: PKCS#8 ("PRIVATE KEY") or
 * SEC 1 ("EC PRIVATE KEY"); anything else, an encrypted key included, is
 * NULL. PEM_read_bio_PrivateKey has OpenSSL 3.0 gather and try every
 * decoder it holds; naming the form (DER, its structure, an EC key before
 * any other) lets it try only the decoders that can apply, and every process
 * start pays this once per configured key. The key's bytes stay in OpenSSL's
 * memory and are cleared when freed.
 */
static inline EVP_PKEY *veridoc_read_private_key_pem(BIO *bio) {
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long length = 0;
    if (PEM_read_bio(bio, &name, &header, &data, &length) != 1) return NULL;
    const char *structure = strcmp(name, "PRIVATE KEY") == 0 ? "PrivateKeyInfo"
        : strcmp(name, "EC PRIVATE KEY") == 0 ? "type-specific" : NULL;
    EVP_PKEY *key = NULL;
    /* A legacy PEM header (Proc-Type, DEK-Info) means an encrypted body. */
    if (structure != NULL && header[0] == '\0') {
        /* SEC 1 holds EC keys only; PKCS#8 may hold any, Ed25519 included. */
        const char *types[2] = { "EC", NULL };
        int tries = structure[0] == 'P' ? 2 : 1;
        for (int i = 0; i < tries && key == NULL; i++) {
            OSSL_DECODER_CTX *context = OSSL_DECODER_CTX_new_for_pkey(&key, "DER", structure, types[i], EVP_PKEY_KEYPAIR, NULL, NULL);
            const unsigned char *cursor = data;
            size_t left = (size_t)length;
            if (context == NULL || OSSL_DECODER_from_data(context, &cursor, &left) != 1 || left != 0) {
                EVP_PKEY_free(key);
                key = NULL;
            }
            OSSL_DECODER_CTX_free(context);
        }
    }
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_clear_free(data, (size_t)length);
    return key;
}

#endif
