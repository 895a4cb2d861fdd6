// swift-tools-version:6.0
import PackageDescription

// librdkafka is the one C library not taken from bookworm's packages: `make
// setup` builds Debian trixie's 2.8 from source into .build/librdkafka
// (scripts/librdkafka says why). CRdKafka's shim includes its headers by a
// path relative to itself; everything that links Kafka links this copy, and
// finds it at run time through the rpath.
let librdkafka = Context.packageDirectory + "/.build/librdkafka/lib"

// The rooms follow the data's path: bytes (CBOR) → cryptography (Crypto) →
// ISO 18013-5 structures and checks (MDoc) → events, tenants and the ordered
// verification (Verification) → the worker (Pipeline) → the command line
// (Veridoc). What is kept goes through one room below both the worker and
// Retention: Storage, the migrations and every statement the product runs.
// The developer's tooling (test issuer, embedded PostgreSQL, mock broker,
// demo, benchmarks, fault injection) is a second binary, veridoc-dev, that
// the product binary does not link.
let package = Package(
    name: "Veridoc",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "veridoc", targets: ["Veridoc"]),
        .executable(name: "veridoc-dev", targets: ["VeridocDev"]),
        .library(name: "Verification", targets: ["Verification"]),
        .library(name: "JSON", targets: ["JSON"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CRdKafka"),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // glibc's <malloc.h>, for mallopt (the worker caps its malloc arenas).
        .systemLibrary(name: "CMalloc"),
        // libcurl (outgoing HTTPS for status lists and CRLs) and zlib (their compressed lists).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The repository's files the binaries carry (the contract, the catalogue, the reason codes), through C23's #embed.
        // DWARF 4 like the Swift code's: bookworm's valgrind 3.19 (the callgrind tests) gives up on clang 21's default DWARF 5.
        .target(name: "CEmbeddedFiles", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .target(name: "CBOR"),
        // A strict RFC 8259 parser and a deterministic writer, for the events on the hot path.
        .target(name: "JSON"),
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        // JSON Web Keys and the one JWE form OpenID4VP responses use (ECDH-ES on P-256, AES-GCM).
        .target(name: "JOSE", dependencies: ["JSON", "Crypto"]),
        // The config file, read once and strictly into one typed section per part of the product.
        .target(name: "Settings", dependencies: ["JSON"]),
        // Calendar arithmetic without Foundation's calendar: RFC 3339 dates and PostgreSQL timestamps.
        .target(name: "CivilDate"),
        .target(name: "FIFO"),
        .target(name: "MDoc", dependencies: ["CBOR", "Crypto", "CivilDate"]),
        .target(name: "Verification", dependencies: ["CBOR", "Crypto", "JOSE", "MDoc", "JSON", "Settings", "DocumentTypes", "CivilDate"]),
        // Status List and identifier list tokens (IETF Token Status List, ISO 18013-5 §12.3.6): read, bounded inflate, signer rules.
        .target(name: "StatusList", dependencies: ["CBOR", "Crypto", "MDoc", "CZlib"]),
        // Outgoing HTTP GET on libcurl, bounded in time, size, redirects and addresses.
        .target(name: "StatusFetch", dependencies: ["CCurl", "HTTPClient"]),
        .target(name: "HTTPClient", dependencies: ["CCurl"]),
        // The status service: lists fetched on threads of its own, verified, cached, and queries answered from them.
        .target(name: "Revocation", dependencies: ["StatusList", "StatusFetch", "Verification", "Settings", "MDoc", "Crypto"]),
        // The project's own fixture factory: test issuers, holders and merchants
        // made at run time, for tests, the demo and the load generator.
        .target(name: "TestIssuer", dependencies: ["CBOR", "Crypto", "JOSE", "JSON", "MDoc", "Verification", "Settings", "CZlib", "DocumentTypes"]),
        .target(name: "Kafka", dependencies: ["CRdKafka"],
                // By path, not -lrdkafka: the other libraries' pkg-config flags put
                // -L/usr/lib/x86_64-linux-gnu first, where a librdkafka-dev would win.
                linkerSettings: [.unsafeFlags(["-Xlinker", librdkafka + "/librdkafka.so.1", "-Xlinker", "-rpath", "-Xlinker", librdkafka])]),
        // librdkafka's mock cluster, for the tests and the tooling; not part of the product.
        .target(name: "KafkaMock", dependencies: ["Kafka", "CRdKafka"]),
        .target(name: "Postgres", dependencies: ["CLibPQ", "CivilDate"]),
        // The database's layout and every statement the product runs on it:
        // the migrations and, per table, its row layout and its queries as values.
        .target(name: "Storage", dependencies: ["Postgres", "JSON"]),
        // Metrics registry and the /metrics, /healthz, /readyz endpoint.
        // The HTTP face on libmicrohttpd: whole requests to a handler, bounded bodies.
        .target(name: "HTTPService", dependencies: ["CMicroHTTPD", "FIFO"]),
        .target(name: "Observability", dependencies: ["CivilDate", "HTTPService", "JSON", "Kafka", "Postgres"]),
        // What happens to disclosed values after verification: retention policy,
        // encrypted value storage, purge, erasure, data-key rotation.
        .target(name: "Retention", dependencies: ["Verification", "MDoc", "Crypto", "Postgres", "Storage", "Settings"]),
        // What analysts read: `veridoc stats` and the HTML report over Storage's
        // read model, small counts suppressed. The report explains reason codes
        // in the words of Schemas/reason-codes.md, compiled in.
        .target(name: "Analytics", dependencies: ["Storage", "CEmbeddedFiles"]),
        // The document types Wallet shares, as data: one file per docType,
        // each element's CBOR type and whether it is personal, a predicate or
        // technical, with its sources (docs/document-types.md).
        .target(name: "DocumentTypes", dependencies: ["CBOR", "JSON", "CEmbeddedFiles"], exclude: ["catalogue"]),
        // The config file as the product runs it: read once, every file it names loaded under one rule.
        .target(name: "Webhooks", dependencies: ["Settings", "Crypto", "HTTPClient", "Storage", "Postgres", "Observability"]),
        .target(name: "Deployment", dependencies: ["Settings", "Verification", "Retention", "Revocation", "Crypto", "Webhooks"]),
        .target(name: "Pipeline", dependencies: ["FIFO", "Deployment", "Webhooks", "DocumentTypes", "Revocation", "StatusList", "Settings", "Verification", "JSON", "Kafka", "Postgres", "Crypto", "MDoc", "Observability", "Retention", "Storage"]),
        // The demo and what it stands on: embedded PostgreSQL, tansu, the load
        // generator and outcome reader, the schema examples.
        .target(name: "DemoKit", dependencies: ["Deployment", "Pipeline", "Kafka", "KafkaMock", "Observability", "Postgres", "Storage", "TestIssuer", "Verification", "Crypto", "HTTPService", "MDoc"]),
        // `veridoc-dev bench`: each stage and the whole product measured as ratios in one run.
        .target(name: "Benchmarks", dependencies: ["DemoKit", "JSON", "Revocation", "StatusFetch", "Pipeline", "Kafka", "KafkaMock", "Observability", "Postgres", "Retention", "Storage", "TestIssuer", "Verification", "SessionAPI", "Crypto", "HTTPService", "MDoc"]),
        // Fault injection: real worker processes, the broker process and PostgreSQL under a fault schedule (`veridoc chaos`).
        .target(name: "Chaos", dependencies: ["DemoKit", "Kafka", "Postgres", "TestIssuer", "Verification", "Crypto", "HTTPClient"]),
        // The session API (`veridoc serve`): authenticated routes, reader tokens, its contract.
        .target(name: "SessionAPI", dependencies: ["Deployment", "Webhooks", "HTTPService", "Observability", "Settings", "Crypto", "JOSE", "JSON", "Verification", "MDoc", "Storage", "Postgres", "Kafka", "CEmbeddedFiles"],
                exclude: ["veridoc-client.v1.js"]),
        // What both binaries share: console output, argument parsing, exit statuses.
        .target(name: "CommandLineSupport", dependencies: ["Postgres", "Settings", "Verification", "Kafka", "Crypto", "HTTPService", "Storage"]),
        .executableTarget(
            name: "Veridoc",
            dependencies: ["CommandLineSupport", "Deployment", "Revocation", "Settings", "Verification", "MDoc", "Crypto", "JSON", "Pipeline", "Postgres", "Observability", "Retention", "Analytics", "Storage", "SessionAPI", "HTTPService", "CMalloc"]),
        .executableTarget(
            name: "VeridocDev",
            dependencies: ["CommandLineSupport", "DemoKit", "Benchmarks", "Chaos", "Pipeline", "Kafka", "KafkaMock", "TestIssuer", "Crypto", "Verification", "DocumentTypes",
                           "SessionAPI", "HTTPService", "HTTPClient", "Deployment", "Observability", "Postgres", "Storage", "JSON", "MDoc"]),

        // What the test targets share: the built binaries, the shared vectors, hex,
        // a Prometheus text parser, a raw HTTP client, polling, a fresh test database,
        // JSON values as Foundation holds them.
        .target(name: "TestSupport", dependencies: ["Postgres", "HTTPService", "JSON", "Kafka"], path: "Tests/TestSupport"),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"]),
        .testTarget(name: "SettingsTests", dependencies: ["Settings", "JSON", "TestSupport"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "TestSupport"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "JSON", "Crypto", "TestSupport"]),
        .testTarget(name: "MDocTests", dependencies: ["MDoc", "CBOR", "Crypto", "TestSupport"]),
        .testTarget(name: "StatusListTests", dependencies: ["StatusList", "MDoc", "CBOR", "Crypto", "TestIssuer", "TestSupport"]),
        // The status service against list servers over real HTTP, with the test issuer's documents and lists.
        .testTarget(name: "RevocationTests", dependencies: ["Revocation", "StatusList", "StatusFetch", "Verification", "Settings", "TestIssuer", "TestSupport",
                                                            "MDoc", "CBOR", "Crypto", "HTTPService"]),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks", "HTTPClient", "Storage", "Crypto", "TestSupport"]),
        .testTarget(name: "StatusFetchTests", dependencies: ["StatusFetch", "HTTPClient", "HTTPService", "Crypto", "TestIssuer", "TestSupport"]),
        .testTarget(name: "DocumentTypesTests", dependencies: ["DocumentTypes", "CBOR", "MDoc", "TestSupport"]),
        .testTarget(name: "VerificationTests", dependencies: ["Verification", "JOSE", "JSON", "MDoc", "CBOR", "Crypto", "TestSupport", "TestIssuer", "DocumentTypes"]),
        .testTarget(name: "TestIssuerTests", dependencies: ["TestIssuer", "Verification", "JOSE", "JSON", "MDoc", "CBOR", "Crypto", "TestSupport"]),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "KafkaMock", "TestSupport", "VeridocDev"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        // Every statement of Storage against a migrated database, and no SQL outside Storage.
        .testTarget(name: "StorageTests", dependencies: ["Storage", "Postgres", "TestSupport", "Analytics"]),
        .testTarget(name: "ObservabilityTests", dependencies: ["Observability", "HTTPService", "TestSupport"]),
        .testTarget(name: "SessionAPITests", dependencies: ["SessionAPI", "Deployment", "HTTPService", "Settings", "Crypto", "JOSE", "JSON", "Verification", "Veridoc", "TestSupport",
                                                             "KafkaMock", "Kafka", "Storage", "Postgres", "TestIssuer", "MDoc", "CBOR", "CommandLineSupport", "Observability"]),
        // The worker binary against a broker process and PostgreSQL.
        .testTarget(name: "PipelineTests", dependencies: ["FIFO", "Veridoc", "VeridocDev", "TestSupport", "JSON", "HTTPService", "KafkaMock", "DemoKit", "Pipeline", "Kafka", "Postgres", "TestIssuer", "Verification", "Observability", "Retention", "Analytics", "Storage", "Crypto", "CBOR", "MDoc", "DocumentTypes"]),
        .testTarget(name: "RetentionTests", dependencies: ["Retention", "Storage", "Verification", "Crypto", "MDoc", "TestSupport"]),
        // ReportBrowserTests renders the report in headless Chromium.
        .testTarget(name: "AnalyticsTests", dependencies: ["Analytics", "Storage", "CommandLineSupport", "TestSupport"]),
        // Runs the built `veridoc` and `veridoc-dev` binaries as a user would.
        .testTarget(name: "VeridocCLITests", dependencies: ["Veridoc", "VeridocDev", "TestSupport", "DemoKit", "Verification", "Crypto", "CBOR", "TestIssuer", "Deployment", "Webhooks"]),
        // A short chaos run (make test) against its own PostgreSQL and broker.
        .testTarget(name: "ChaosTests", dependencies: ["Veridoc", "VeridocDev", "Chaos", "TestSupport"]),
        // Hostile events through the real Verifier: exact reason codes within bounded time.
        .testTarget(name: "HostileInputTests", dependencies: ["Verification", "TestIssuer", "MDoc", "CBOR", "Crypto", "JOSE", "JSON", "Veridoc", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
