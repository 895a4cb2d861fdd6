#!/bin/bash
# Creates the development secrets the compose worker needs, once, in the
# veridoc-pki volume mounted at /etc/veridoc/pki (see docker-compose.yml,
# service "keys"). Runs as root in the veridoc image and hands the files to
# the worker's user (10001). Existing files are kept, so keys survive restarts;
# `docker compose down -v` discards them.
#
#   pki/merchant/merchant-key.pem   merchant encryption key (veridoc keys generate)
#   pki/merchant/merchant-cert.pem  its self-signed certificate (pkRHash printed in the log)
#   pki/web-reader/merchant-key.pem  the web reader key serve signs DeviceRequests with, and
#   pki/web-reader/merchant-cert.pem its self-signed certificate: a stand-in for the one
#                                   Apple Business issues (Apple Wallet accepts only that)
#   pki/nonce.key                   32 random bytes, base64: the nonce HMAC key
#   pki/iaca/*.pem                  trust anchors: copied from deploy/compose/iaca/
#
# VERIDOC_PKI, VERIDOC_IACA_SOURCE and VERIDOC_PKI_OWNER (uid:gid) replace the
# container's paths and user when it runs outside one (deploy/compose/check-wiring).
set -euo pipefail

pki=${VERIDOC_PKI:-/etc/veridoc/pki}
source_iaca=${VERIDOC_IACA_SOURCE:-/etc/veridoc/iaca-source}
owner=${VERIDOC_PKI_OWNER:-10001:10001}

install -d -m 0750 -o "${owner%:*}" -g "${owner#*:}" "$pki" "$pki/iaca"

if [ ! -f "$pki/merchant/merchant-key.pem" ]; then
    rm -rf "$pki/merchant"
    veridoc keys generate "$pki/merchant"
else
    echo "keeping merchant key; pkRHash: $(veridoc keys hash "$pki/merchant/merchant-key.pem")"
fi

if [ ! -f "$pki/web-reader/merchant-key.pem" ]; then
    rm -rf "$pki/web-reader"
    veridoc keys generate "$pki/web-reader" >/dev/null
    echo "web reader key: $pki/web-reader (a stand-in: replace with the certificate Apple Business issues)"
fi

if [ ! -s "$pki/nonce.key" ]; then
    (umask 077 && head -c 32 /dev/urandom | base64 > "$pki/nonce.key")
    echo "nonce key: $pki/nonce.key"
fi

# Trust anchors: the IACA roots put in deploy/compose/iaca/ (*.pem, *.crt, *.cer).
shopt -s nullglob
anchors=("$source_iaca"/*.pem "$source_iaca"/*.crt "$source_iaca"/*.cer)
rm -f "$pki/iaca"/*
if [ ${#anchors[@]} -gt 0 ]; then
    cp "${anchors[@]}" "$pki/iaca/"
    echo "trust anchors: ${#anchors[@]} file(s) from deploy/compose/iaca/"
else
    # The worker refuses to start without a trust anchor. This placeholder
    # lets the stack run end to end, but no real document chains to it: every
    # request is rejected (issuer.chain) until real IACA roots are added.
    cp "$pki/merchant/merchant-cert.pem" "$pki/iaca/placeholder-not-an-iaca.pem"
    echo "WARNING: deploy/compose/iaca/ is empty; using a placeholder trust anchor (nothing will verify)" >&2
fi

chown -R "$owner" "$pki"
chmod 0600 "$pki/merchant/merchant-key.pem" "$pki/web-reader/merchant-key.pem" "$pki/nonce.key"
chmod 0644 "$pki/merchant/merchant-cert.pem" "$pki/web-reader/merchant-cert.pem" "$pki/iaca"/*
