import Postgres

/// The database layout, as versioned SQL shipped in the binary. A version is
/// never edited once released; changes are new versions.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    public static let all: [Migration] = [
        Migration(version: 1, name: "results, elements, nonces, outbox, consumer positions", sql: """
            CREATE TABLE results (
                event_id          text PRIMARY KEY,
                tenant            text,
                flow              text,
                verdict           text NOT NULL CHECK (verdict IN ('verified', 'rejected')),
                reason_codes      text[] NOT NULL,
                doc_type          text,
                issuer_subject    text,
                issuer_country    text,
                mso_signed        timestamptz,
                mso_valid_from    timestamptz,
                mso_valid_until   timestamptz,
                event_time        timestamptz,
                received_at       timestamptz NOT NULL,
                verified_at       timestamptz NOT NULL,
                processing_seconds double precision NOT NULL,
                source_topic      text NOT NULL,
                source_partition  integer NOT NULL,
                source_offset     bigint NOT NULL
            );
            CREATE INDEX results_verified_at ON results (verified_at);
            CREATE INDEX results_tenant_verified_at ON results (tenant, verified_at);

            -- Names and retention metadata of disclosed elements; never values.
            CREATE TABLE elements (
                event_id          text NOT NULL REFERENCES results (event_id) ON DELETE CASCADE,
                namespace         text NOT NULL,
                element           text NOT NULL,
                requested         boolean NOT NULL,
                retention_intent  text NOT NULL CHECK (retention_intent IN ('willNotStore', 'mayStore')),
                retention_days    integer,
                PRIMARY KEY (event_id, namespace, element)
            );

            -- A nonce is kept only as a keyed hash: enough to refuse a replay, useless to anyone else.
            CREATE TABLE nonces (
                tenant            text NOT NULL,
                nonce_hash        bytea NOT NULL,
                event_id          text NOT NULL,
                used_at           timestamptz NOT NULL,
                PRIMARY KEY (tenant, nonce_hash)
            );

            CREATE TABLE outbox (
                id                text PRIMARY KEY,
                event_id          text NOT NULL,
                kafka_key         bytea,
                payload           text NOT NULL,
                created_at        timestamptz NOT NULL DEFAULT now(),
                published_at      timestamptz,
                claimed_by        text,
                claimed_until     timestamptz
            );
            CREATE INDEX outbox_unpublished ON outbox (created_at) WHERE published_at IS NULL;

            -- The next offset to read per partition, written in the same transaction
            -- as the results it covers: this, not Kafka's committed offset, is where
            -- a (re)assigned partition starts.
            CREATE TABLE consumer_positions (
                consumer_group    text NOT NULL,
                topic             text NOT NULL,
                partition         integer NOT NULL,
                next_offset       bigint NOT NULL,
                updated_at        timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer_group, topic, partition)
            );
            """),
    ]

    /// The advisory-lock key under which migrations run, so that workers
    /// starting together apply each version once.
    static let lockKey: Int64 = 0x7665_7269_646f_6331  // "veridoc1"

    /// Applies every version the database lacks, under the advisory lock.
    /// Returns the versions applied now.
    @discardableResult
    public static func apply(on connection: PostgresConnection) throws -> [Int] {
        try connection.withAdvisoryLock(lockKey) {
            try connection.executeScript("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let applied = try connection.execute("SELECT version FROM schema_migrations")
            let done = Set((0..<applied.rowCount).compactMap { applied.int($0, "version") }.map(Int.init))
            var now: [Int] = []
            for migration in all where !done.contains(migration.version) {
                try connection.transaction { connection in
                    try connection.executeScript(migration.sql)
                    _ = try connection.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                        [.int(Int64(migration.version)), .text(migration.name)])
                }
                now.append(migration.version)
            }
            return now
        }
    }
}
