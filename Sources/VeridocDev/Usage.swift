import CommandLineSupport

enum Usage {
    static let text = """
        usage: veridoc-dev <command> [options]

        The developer's tooling around veridoc (which it runs as the worker): nothing here is part of the product image.

          demo [--events N] [--rate R] [--workers W] [--keep] [--seed S] [--mix M]
                              The main job on embedded defaults: its own PostgreSQL and broker, a test issuer,
                              a realistic stream through the real worker, a summary checked against the database.
          bench [--quick] [--events N] [--seconds S] [--duration D] [--threads T] [--backlog N] [--output DIR] [--skip-e2e] [--skip-scaling] [--skip-store] [--skip-api] [--skip-status] [--skip-hostile]
                              Crypto ceiling, verify pool, end to end (worker processes, broker, PostgreSQL), scaling,
                              hostile input and what the persister's statements cost PostgreSQL;
                              a table on stdout, DIR/latest.json and DIR/latest.md (default DIR bench/results);
                      --backlog N: events staged before a worker starts (default 100000; 0 skips).
          bench --hostile-only [--quick] [--hostile-bytes B] [--hostile-runs R] [--hostile-timeout S] [--hostile-keep DIR] [--output DIR]
                              The hostile-input row alone (also in a full run, unless --skip-hostile): the worst event
                              per dimension at B bytes (default 4 MiB) beside a valid event of that size; DIR/hostile.*.
          bench --profile-verify N [--issuers I --tenants T]
                              Generate N events, then only verify them on one thread (for valgrind/perf).
          loadgen --bootstrap SERVERS [--topic T] [--rate R] [--count N] [--mix M] [--fixture DIR] [--seed S]
                              Synthetic requests (mix: realistic, valid, or kind=weight,…) for the tenant in DIR.
          loadgen --fixture DIR --fixture-only
                              Only make the tenant in DIR (config.json, merchant keys, issuer) if missing; no broker.
          chaos [--duration S] [--events N] [--faults N] [--seed S] [--workers W] [--broker mock|tansu] [--no-broker-restarts] [--output FILE] [--keep]
                              Fault injection: workers, broker and PostgreSQL of its own under seeded faults; invariants checked.
          examples DIR [--at RFC3339]
                              A folder to try veridoc verify on: the test issuer's tenant (config.json and keys), one event per
                              flow that verifies, a few rejected for different reasons, and the --at to use (DIR/AT).
          examples --schema-examples DIR [--at RFC3339]
                              The examples beside the event schemas (Schemas/examples) made again: their tenant in DIR/tenant
                              (which must not exist), the request examples, and the outcomes veridoc verify --json makes of them.
          sandbox [--dir DIR] [--port PORT]
                              A whole Veridoc on this machine for a first integration: its own PostgreSQL and broker, the
                              worker, and the session API on PORT (default 8080), with a test tenant that trusts the sandbox's
                              test issuer and a production tenant that does not; DIR/sandbox.env holds the URL and API keys.
          wallet --sandbox DIR [--session FILE] [--url URL] [--api-key KEY | --production] [--protocol P] [--disclose NS/ELEMENT,…] [--age N] [--fault NAME]
                              Answers a session as a wallet (or reader app) would, with the sandbox's test issuer, through
                              serve's submit route; the session is what POST /v1/sessions answered (FILE, or stdin).
          catalogue           The document catalogue (Sources/DocumentTypes/catalogue) as Markdown tables: the part of
                              docs/document-types.md between its markers.
          dev-broker [--brokers N] [--topic NAME:PARTITIONS]... [--parent-pid PID] [--rebalance-delay-ms MS]
                 In-process mock Kafka cluster for development/tests: prints BOOTSTRAP=<list>, runs until SIGTERM/SIGINT.
                 stdin commands (answer OK / ERR <reason>): down ID | up ID | errors APIKEY CODE[,CODE…] | topic NAME PARTITIONS
        """
}

extension Usage {
    typealias Option = CommandDetails.Option
    static let failed = "failed (a step or the tooling it started failed; the message says which)"

    /// Each command's options, one line each, exit statuses and an example:
    /// what `<command> --help` adds to its lines above.
    static let details: [String: CommandDetails] = [
        "demo": CommandDetails(
            options: [Option("--events N", "How many events to produce (default 5000)."),
                      Option("--rate R", "Events per second (default: as fast as the worker keeps up)."),
                      Option("--workers W", "The worker's pool threads, 1…256 (default: the core count)."),
                      Option("--keep", "Keep the demo's PostgreSQL folder afterwards, to look at the tables."),
                      Option("--seed S", "Seed of the test issuer and the stream (default 2026): the same seed, the same events."),
                      Option("--mix M", "realistic (default), valid, or kind=weight,… of the load generator's kinds."),
                      Option("--family-name NAME", "The synthetic holder's family name (tests plant a value and look for it in logs).")],
            exitStatuses: [(ExitStatus.success, "the summary agrees with the database"), (ExitStatus.failure, "it does not, or \(failed)"), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev demo --events 2000 --rate 500"]),
        "bench": CommandDetails(
            options: [Option("--quick", "A short run (fewer events, shorter stages) to see that everything works."),
                      Option("--events N", "Events for the ceiling and pool stages (default 3000; quick 200)."),
                      Option("--seconds S", "Seconds each ceiling measurement runs (default 1; quick 0.2)."),
                      Option("--duration D", "Seconds of each end-to-end load step (default 30; quick 2)."),
                      Option("--threads T", "Pool threads (default: the core count)."),
                      Option("--backlog N", "Events staged before a worker starts (default 100000; quick 1000; 0 skips)."),
                      Option("--output DIR", "Where latest.json and latest.md (or hostile.*) go (default bench/results)."),
                      Option("--skip-e2e", "Leave out the end-to-end stage (and the scaling and backlog runs with it)."),
                      Option("--skip-scaling", "Leave out the scaling runs."),
                      Option("--skip-store", "Leave out what the persister's statements cost PostgreSQL."),
                      Option("--skip-api", "Leave out the session API stage."),
                      Option("--skip-status", "Leave out the revocation (status list) stage."),
                      Option("--skip-hostile", "Leave out the hostile-input row."),
                      Option("--api-only", "Only the session API stage, printed (no report files)."),
                      Option("--status-only", "Only the revocation (status list) stage, printed (no report files)."),
                      Option("--hostile-only", "Only the hostile-input row, into DIR/hostile.json and DIR/hostile.md."),
                      Option("--hostile-bytes B", "Size of each hostile event (default 4 MiB)."),
                      Option("--hostile-runs R", "Runs per hostile dimension (default 5; quick 1)."),
                      Option("--hostile-timeout S", "Seconds one hostile run may take (default 60; quick 30)."),
                      Option("--hostile-keep DIR", "Keep the hostile events in DIR."),
                      Option("--profile-verify N", "Make N events, then only verify them on one thread (for perf or valgrind)."),
                      Option("--issuers I", "With --profile-verify: issuers the events come from (default 1)."),
                      Option("--tenants T", "With --profile-verify: tenants they are for (default 1)."),
                      Option("--measure-child RESULT TIMEOUT COMMAND…", "Internal: how bench runs one measured child process (first argument only).")],
            exitStatuses: [(ExitStatus.success, "measured"), (ExitStatus.failure, failed), (ExitStatus.usageOrConfiguration, "usage error, or veridoc not found beside veridoc-dev")],
            examples: ["veridoc-dev bench --quick --output /tmp/bench"]),
        "loadgen": CommandDetails(
            options: [Option("--bootstrap SERVERS", "The Kafka bootstrap servers (required unless --fixture-only)."),
                      Option("--topic T", "The request topic (default veridoc.requests)."),
                      Option("--rate R", "Events per second (default: as fast as the broker takes them)."),
                      Option("--count N", "How many events (default 1000)."),
                      Option("--mix M", "realistic (default), valid, or kind=weight,…."),
                      Option("--fixture DIR", "The tenant's folder, made if missing (default loadgen-fixture)."),
                      Option("--fixture-only", "Only make the tenant in DIR; no broker needed."),
                      Option("--seed S", "Seed of the stream and of a new tenant (default: random).")],
            exitStatuses: [(ExitStatus.success, "produced"), (ExitStatus.failure, failed), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev loadgen --bootstrap 127.0.0.1:9092 --rate 200 --count 10000 --fixture ./tenant"]),
        "chaos": CommandDetails(
            options: [Option("--duration S", "Seconds of faults, at least 5 (default 120)."),
                      Option("--events N", "How many events to send (default: scaled to the duration)."),
                      Option("--faults N", "How many faults to inject (0: none; default: scaled to the duration)."),
                      Option("--seed S", "Seed of the fault schedule (default 1): the same seed, the same faults."),
                      Option("--workers W", "Worker processes at the start, 1…16 (default 3)."),
                      Option("--broker KIND", "mock (librdkafka's mock cluster, default) or tansu."),
                      Option("--no-broker-restarts", "Every fault but broker restarts: then every outcome event must arrive too."),
                      Option("--output FILE", "Write the summary to FILE."),
                      Option("--keep", "Keep the work folder (it is kept anyway when an invariant broke)."),
                      Option("--repository DIR", "The checkout holding scripts/test-postgres (default: found from the binary).")],
            exitStatuses: [(ExitStatus.success, "every invariant held"), (ExitStatus.failure, "an invariant broke, or \(failed)"), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev chaos --duration 60 --seed 7"]),
        "examples": CommandDetails(
            options: [Option("DIR", "The folder to write (one DIR, required)."),
                      Option("--at RFC3339", "The time the events are made for (default: now)."),
                      Option("--schema-examples", "Make Schemas/examples again instead: the tenant in DIR/tenant, requests and outcomes.")],
            exitStatuses: [(ExitStatus.success, "written"), (ExitStatus.failure, failed), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev examples /tmp/veridoc-examples --at 2026-12-01T12:00:00Z"]),
        "catalogue": CommandDetails(
            options: [],
            exitStatuses: [(ExitStatus.success, "printed"), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev catalogue"]),
        "sandbox": CommandDetails(
            options: [Option("--dir DIR", "Where the sandbox keeps its database, keys and sandbox.env (default /tmp/veridoc-sandbox); its test issuer is kept across runs."),
                      Option("--port PORT", "The session API's port on 127.0.0.1 (default 8080; 0 picks a free one).")],
            exitStatuses: [(ExitStatus.success, "stopped by SIGINT or SIGTERM"), (ExitStatus.failure, failed), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev sandbox --dir /tmp/veridoc-sandbox --port 8080"]),
        "wallet": CommandDetails(
            options: [Option("--sandbox DIR", "The sandbox whose test issuer presents the document, and whose sandbox.env names the URL and key (required)."),
                      Option("--session FILE", "What POST /v1/sessions answered (default: read from stdin)."),
                      Option("--url URL", "The session API (default: the sandbox's)."),
                      Option("--api-key KEY", "The tenant's API key, with --url (default: the sandbox's test tenant's)."),
                      Option("--production", "Use the sandbox's production tenant's key: its sessions reject the test issuer's documents."),
                      Option("--protocol P", "For a web session: org-iso-mdoc (default) or openid4vp, the request it answers."),
                      Option("--disclose NS/ELEMENT,…", "Disclose only these elements (and the ages), as a holder who declines the rest."),
                      Option("--age N", "The holder's age, 0…125: birth_date, age_in_years and every age_over_NN follow."),
                      Option("--fault NAME", "Issue the document with this defect (msoExpired, untrustedIssuer, alteredElement, …: the test issuer's faults).")],
            exitStatuses: [(ExitStatus.success, "serve took the response (202)"), (ExitStatus.failure, "serve refused it (the answer is on stderr), or \(failed)"),
                           (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev wallet --sandbox /tmp/veridoc-sandbox --session session.json --age 25"]),
        "dev-broker": CommandDetails(
            options: [Option("--brokers N", "Brokers in the mock cluster (default 3)."),
                      Option("--topic NAME:PARTITIONS", "Create a topic (repeatable)."),
                      Option("--parent-pid PID", "Stop when this process is gone, so a crashed harness leaves no broker behind."),
                      Option("--rebalance-delay-ms MS", "The group coordinator's rebalance delay (default 250).")],
            exitStatuses: [(ExitStatus.success, "stopped by SIGTERM or SIGINT, or its parent is gone"), (ExitStatus.failure, "the cluster could not start"), (ExitStatus.usageOrConfiguration, "usage error")],
            examples: ["veridoc-dev dev-broker --brokers 3 --topic veridoc.requests:6"]),
    ]
}
