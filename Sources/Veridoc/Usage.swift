import CommandLineSupport

enum Usage {
    static let text = """
        usage: veridoc <command> [options]

          run --config FILE   The worker: Kafka → verification pool → PostgreSQL → outcome events (SIGTERM drains and exits 0).
          migrate --config FILE
                              Apply the database migrations and exit.
          serve --config FILE
                              The session API (serve.port): sessions, reader tokens, probes, /metrics, /openapi.json (SIGTERM stops, exit 0).
          verify --config FILE [--at RFC3339] [--json] EVENT.json|- [EVENT.json …]
                 Verify veridoc.verification.requested.v1 events. Exit 0 verified (all), 1 rejected (any, or test_rejected), 2 usage/config error,
                 3 test_verified (all accepted, some as a test tenant's mock response: never production assurance).
          keys generate DIR   New P-256 merchant encryption key and self-signed certificate; prints pkRHash.
          keys api-key        A new session API key, and the sha256: line for its tenant's apiKeys (the key is shown once).
          keys hash FILE      pkRHash (SHA-256 of the uncompressed public key) of a PEM key or certificate.
          keys generate-replay-key FILE
                              A new replay.nonceKeyFile (32 random bytes, base64, 0600) for the workers and serve to share.
          keys generate-signing-key FILE
                              A new P-256 signing key (0600) for readerTokens, webReader or openID4VPVerifier, its public key in FILE.pub.pem.
          keys generate-webhook-secret FILE
                              A new whsec_ webhook signing secret (0600) for an endpoint's secrets.
          keys generate-webhook-key FILE
                              A new Ed25519 webhook signing key (0600) for an endpoint's signingKey; prints its whpk_ public key.
          keys generate-outcome-key DIR
                              An outcome recipient key pair: the private key for the integrator, the public one for outcomeRecipientKey.
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
          report --config FILE --html OUT [--since DURATION] [--tenant T] [--assurance production|test|all] [--per hour|day|week]
                              Self-contained HTML page with charts (production only by default, as stats), per hour, day or week.
          webhooks list|redeliver|enable --config FILE [--tenant T] …
                              Webhook deliveries: list them (--state, --limit), send dead ones again (--id or --dead),
                              take back an endpoint that answered 410 Gone (--endpoint).

        veridoc <command> --help prints one command's usage; veridoc --version the version and the linked libraries'.
        The demo, the benchmarks, the load generator and fault injection are in veridoc-dev.
        """
}

extension Usage {
    typealias Option = CommandDetails.Option
    static let config = Option("--config FILE", "The config file (JSON; paths in it are relative to its folder; VERIDOC_* variables override it).")
    /// What stats and report share.
    static let analytics = [Option("--since DURATION", "How far back: 90m, 24h, 7d (default 24h)."),
                            Option("--tenant T", "One tenant only (default: all)."),
                            Option("--assurance SCOPE", "production (default), test or all: which outcomes count.")]

    /// Status 2 of every command that opens the database: restarting will not
    /// help when a newer binary has migrated it.
    static let databaseUsage = "usage or configuration error, or a database schema newer than this binary"

    /// Each command's options, one line each, exit statuses and an example:
    /// what `<command> --help` adds to its lines above.
    static let details: [String: CommandDetails] = [
        "run": CommandDetails(
            options: [config],
            exitStatuses: [(ExitStatus.success, "stopped by SIGTERM or SIGINT after draining"), (ExitStatus.failure, "failed (PostgreSQL unreachable at start-up, a fatal Kafka error)"),
                           (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc run --config /etc/veridoc/config.json"]),
        "migrate": CommandDetails(
            options: [config],
            exitStatuses: [(ExitStatus.success, "the schema is current"), (ExitStatus.failure, "PostgreSQL unreachable for 60 s, or a migration failed"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc migrate --config config.json"]),
        "serve": CommandDetails(
            options: [config],
            exitStatuses: [(ExitStatus.success, "stopped by SIGTERM or SIGINT"), (ExitStatus.failure, "failed"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc serve --config config.json"]),
        "verify": CommandDetails(
            options: [config,
                      Option("--at RFC3339", "Verify as at this time (default: now), e.g. 2026-12-01T12:00:00Z."),
                      Option("--json", "Print each outcome CloudEvent on one line instead of the per-check report."),
                      Option("EVENT.json", "A request event to verify; - reads one from standard input. Several are verified in order under the one configuration.")],
            exitStatuses: [(ExitStatus.success, "verified: every event"), (ExitStatus.failure, "rejected or test_rejected: any event"), (ExitStatus.usageOrConfiguration, "usage, configuration or unreadable input"),
                           (VerifyCommand.testVerified, "test_verified: every event accepted, some only as a test tenant's mock response (never production assurance)")],
            examples: ["veridoc verify --config config.json --at 2026-12-01T12:00:00Z event.json", "veridoc verify --config config.json --json captured/*.json"]),
        "keys": CommandDetails(
            options: [Option("DIR", "keys generate: the folder for merchant-key.pem (0600) and merchant-cert.pem; keys generate-outcome-key: for outcome-recipient-key.pem (0600) and outcome-recipient.pem. Existing files are never overwritten."),
                      Option("FILE", "keys hash: a PEM key or certificate; keys generate-data-key, generate-replay-key, generate-signing-key, generate-webhook-secret, generate-webhook-key: the new key file (0600)."),
                      config],
            exitStatuses: [(ExitStatus.success, "done"), (ExitStatus.failure, "keys generate-data-key or rotate-data-key failed"), (ExitStatus.usageOrConfiguration, "usage or configuration error, a key could not be made or read, or (rotate-data-key) a database schema newer than this binary")],
            examples: ["veridoc keys generate pki/", "veridoc keys hash pki/merchant-key.pem", "veridoc keys api-key", "veridoc keys generate-replay-key pki/nonce.key",
                       "veridoc keys generate-signing-key pki/reader-token-key.pem", "veridoc keys generate-webhook-secret pki/hooks/primary.whsec",
                       "veridoc keys generate-webhook-key pki/hooks/primary-ed25519.pem", "veridoc keys generate-outcome-key pki/outcomes/"]),
        "purge": CommandDetails(
            options: [config, Option("--now RFC3339", "Purge as if it were this time (default: now).")],
            exitStatuses: [(ExitStatus.success, "done"), (ExitStatus.failure, "failed (PostgreSQL)"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc purge --config config.json"]),
        "forget": CommandDetails(
            options: [config, Option("--request ID", "Erase the values retained for this request (event) id."),
                      Option("--tenant T", "Erase every value retained for this tenant.")],
            exitStatuses: [(ExitStatus.success, "done"), (ExitStatus.failure, "failed (PostgreSQL)"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc forget --config config.json --request 3f2c9a4e-5b1d-4c8e-9a7f-2d6e1b0c4a93"]),
        "stats": CommandDetails(
            options: [config] + analytics,
            exitStatuses: [(ExitStatus.success, "done"), (ExitStatus.failure, "failed (PostgreSQL)"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc stats --config config.json --since 7d --tenant acme"]),
        "report": CommandDetails(
            options: [config, Option("--html OUT", "Where to write the page."),
                      Option("--per hour|day|week", "What one bar of the chart holds (default: hours, or days past 45 days; weeks start on Mondays, UTC).")] + analytics,
            exitStatuses: [(ExitStatus.success, "written"), (ExitStatus.failure, "failed (PostgreSQL, or the file could not be written)"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc report --config config.json --since 7d --html report.html", "veridoc report --config config.json --since 90d --per week --html weekly.html"]),
        "webhooks": CommandDetails(
            options: [config, Option("--tenant T", "Only this tenant's deliveries (enable: the endpoint's tenant)."),
                      Option("--state pending|delivered|dead", "list: only deliveries in this state."), Option("--limit N", "list: at most N, newest first (default 50)."),
                      Option("--id WEBHOOK_ID", "redeliver: this dead delivery (of --tenant, which it needs)."), Option("--dead", "redeliver: every dead delivery (of --tenant)."),
                      Option("--endpoint E", "enable: the endpoint that answered 410 Gone.")],
            exitStatuses: [(ExitStatus.success, "done"), (ExitStatus.failure, "failed (PostgreSQL)"), (ExitStatus.usageOrConfiguration, databaseUsage)],
            examples: ["veridoc webhooks list --config config.json --state dead", "veridoc webhooks redeliver --config config.json --dead --tenant acme",
                       "veridoc webhooks enable --config config.json --tenant acme --endpoint primary"]),
    ]
}

extension ExitStatus {
    /// `of(usage:_:)` with this binary's usage text.
    static func of(_ body: () throws -> Void) -> Int32 { of(usage: Usage.text, body) }
}
