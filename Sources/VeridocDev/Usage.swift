import CommandLineSupport

enum Usage {
    static let text = """
        usage: veridoc-dev <command> [options]

        The developer's tooling around veridoc (which it runs as the worker): nothing here is part of the product image.

          demo [--events N] [--rate R] [--workers W] [--keep] [--seed S] [--mix M]
                              The main job on embedded defaults: its own PostgreSQL and broker, a test issuer,
                              a realistic stream through the real worker, a summary checked against the database.
          bench [--quick] [--events N] [--seconds S] [--duration D] [--threads T] [--backlog N] [--output DIR] [--skip-e2e] [--skip-scaling] [--skip-store] [--skip-api] [--skip-hostile]
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
          chaos [--duration S] [--events N] [--faults N] [--seed S] [--workers W] [--broker mock|tansu] [--output FILE] [--keep]
                              Fault injection: workers, broker and PostgreSQL of its own under seeded faults; invariants checked.
          examples DIR [--at RFC3339]
                              A folder to try veridoc verify on: the test issuer's tenant (config.json and keys), one event per
                              flow that verifies, a few rejected for different reasons, and the --at to use (DIR/AT).
          examples --schema-examples DIR [--at RFC3339]
                              The examples beside the event schemas (Schemas/examples) made again: their tenant in DIR/tenant
                              (which must not exist), the request examples, and the outcomes veridoc verify --json makes of them.
          dev-broker [--brokers N] [--topic NAME:PARTITIONS]... [--parent-pid PID] [--rebalance-delay-ms MS]
                 In-process mock Kafka cluster for development/tests: prints BOOTSTRAP=<list>, runs until SIGTERM/SIGINT.
                 stdin commands (answer OK / ERR <reason>): down ID | up ID | errors APIKEY CODE[,CODE…] | topic NAME PARTITIONS
        """
}
