# Veridoc worker image (the default target, `runtime`: the veridoc binary alone).
#
#   docker build -t veridoc:dev .
#   docker build --target tooling -t veridoc-tooling:dev .   # adds veridoc-dev (loadgen, dev-broker, …) for development
#   docker run --rm -v "$PWD/deploy/compose:/etc/veridoc:ro" veridoc:dev        # veridoc run --config /etc/veridoc/config.json
#   docker run --rm veridoc:dev verify --config /etc/veridoc/config.json -    # any other subcommand
#
# Stage 1 builds librdkafka 2.8 from Debian trixie's source package
# (scripts/librdkafka: bookworm's 2.0.2 is too old) and a release binary with
# the Swift runtime linked statically; stage 2 is Debian bookworm-slim with
# only the C libraries the binary links (that librdkafka, libpq, libcrypto
# from libssl3, libmicrohttpd, libcurl, zlib, and librdkafka's codecs and SASL) and CA
# certificates. The developer's tooling (veridoc-dev: test issuer, mock
# broker, load generator) is built and shipped only by the `tooling` target.
# See docs/operations.md.

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build

# Headers and pkg-config files for the system-library targets in Package.swift,
# and what librdkafka's build needs. Unpinned on purpose: bookworm's point
# releases carry the security fixes.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpq-dev libssl-dev libmicrohttpd-dev libcurl4-openssl-dev pkg-config \
      gcc make zlib1g-dev libzstd-dev liblz4-dev libsasl2-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Where Package.swift links it from (.build/librdkafka, found through the rpath).
COPY scripts/librdkafka ./scripts/librdkafka
RUN scripts/librdkafka /src/.build/librdkafka
# Tests/ is copied only because SwiftPM checks that every declared target's
# folder exists; no test is built.
COPY Package.swift ./
COPY Sources ./Sources
# The documents Sources/CEmbeddedFiles compiles in (the OpenAPI contract, the reason codes).
COPY Schemas ./Schemas
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product veridoc \
 && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/veridoc" /out/veridoc \
 && /out/veridoc help >/dev/null

# ---------------------------------------------------------------------------
FROM build AS build-tooling
RUN swift build -c release --static-swift-stdlib --product veridoc-dev \
 && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/veridoc-dev" /out/veridoc-dev \
 && /out/veridoc-dev help >/dev/null

# ---------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS base

ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="veridoc" \
      org.opencontainers.image.description="Veridoc worker: verifies ISO 18013-5 / Apple Wallet identity responses from Kafka into PostgreSQL" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim" \
      org.opencontainers.image.documentation="docs/operations.md"

# Runtime libraries only (no compilers, no curl command: libcurl4 is the
# library the status lists are fetched with, zlib1g inflates them). libstdc++6 is listed
# although the slim image has it, because the Swift runtime needs it.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libpq5 libssl3 libmicrohttpd12 libcurl4 libstdc++6 \
      zlib1g libzstd1 liblz4-1 libsasl2-2 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 veridoc \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin veridoc

# The binary's rpath names the build folder, absent here: the loader falls
# back to its cache, which ldconfig makes hold /usr/local/lib.
COPY --from=build /src/.build/librdkafka/lib/librdkafka.so.1 /usr/local/lib/
RUN ldconfig
COPY --from=build /out/veridoc /usr/local/bin/veridoc

# ---------------------------------------------------------------------------
# Development only (docker-compose's loadgen profile): the product image plus veridoc-dev.
FROM base AS tooling
COPY --from=build-tooling /out/veridoc-dev /usr/local/bin/veridoc-dev
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["veridoc-dev"]
CMD ["help"]

# ---------------------------------------------------------------------------
# Last, so that a plain `docker build` makes the product image.
FROM base AS runtime
COPY deploy/docker/healthcheck /usr/local/bin/veridoc-healthcheck

# Numeric, so Kubernetes' runAsNonRoot can verify it without /etc/passwd.
USER 10001:10001
WORKDIR /tmp

# /metrics, /healthz, /readyz (config observability.port / VERIDOC_HTTP_PORT).
EXPOSE 9464
# SIGTERM drains for worker.drainTimeoutSeconds, then exits 0.
STOPSIGNAL SIGTERM
# GET /healthz over bash's /dev/tcp (the image has no curl). Kubernetes ignores
# this and uses the chart's probes. Set VERIDOC_HTTP_PORT if the port is not 9464.
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=3 CMD ["veridoc-healthcheck"]

ENTRYPOINT ["veridoc"]
CMD ["run", "--config", "/etc/veridoc/config.json"]
