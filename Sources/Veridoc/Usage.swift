import CommandLineSupport

enum Usage {
    static let text = """
        usage: veridoc <command> [options]

          run --config FILE   The worker: Kafka → verification pool → PostgreSQL → outcome events (SIGTERM drains and exits 0).
          migrate --config FILE
                              Apply the database migrations and exit.
          serve --config FILE
                              The session API (serve.port): sessions, reader tokens, probes, /metrics, /openapi.json (SIGTERM stops, exit 0).
          verify --config FILE [--at RFC3339] [--json] EVENT.json|-
                 Verify one veridoc.verification.requested.v1 event. Exit 0 verified, 1 rejected (or test_rejected), 2 usage/config error,
                 3 test_verified (a test tenant's mock response: never production assurance).
          keys generate DIR   New P-256 merchant encryption key and self-signed certificate; prints pkRHash.
          keys api-key        A new session API key, and the sha256: line for its tenant's apiKeys (the key is shown once).
          keys hash FILE      pkRHash (SHA-256 of the uncompressed public key) of a PEM key or certificate.
          keys generate-data-key FILE
                              New AES-256 data key for stored element values (mode 0600).
          keys rotate-data-key --config FILE
                              Re-encrypt stored values under retention.activeKey.
          purge --config FILE [--now RFC3339]
                              One pass deleting element values past retain_until (--now: as if it were then).
          forget --config FILE (--request ID | --tenant T)
                              Erase retained values (right to erasure); outcome facts stay.
          stats --config FILE [--since DURATION] [--tenant T] [--assurance production|test|all]
                              Outcome counts, reasons and latency (default --since 24h; counts 1–4 as <5;
                              production outcomes only unless --assurance test or all).
          report --config FILE --html OUT [--since DURATION] [--tenant T] [--assurance production|test|all]
                              Self-contained HTML page with charts (production only by default, as stats).

        veridoc <command> --help prints one command's usage; veridoc --version the version and the linked libraries'.
        The demo, the benchmarks, the load generator and fault injection are in veridoc-dev.
        """
}

extension ExitStatus {
    /// `of(usage:_:)` with this binary's usage text.
    static func of(_ body: () throws -> Void) -> Int32 { of(usage: Usage.text, body) }
}
