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

#endif
