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
        // docs/retention.md. Values live apart from their metadata, encrypted,
        // in a table partitioned by expiry so that purge drops whole tables.
        Migration(version: 2, name: "retention metadata, encrypted element values partitioned by retain_until", sql: """
            ALTER TABLE elements ADD COLUMN retention_source text NOT NULL DEFAULT 'none'
                CHECK (retention_source IN ('request', 'tenant-default', 'not-requested', 'none'));
            ALTER TABLE elements ADD COLUMN retention_capped boolean NOT NULL DEFAULT false;
            -- NULL: not kept (willNotStore); 'infinity': mayStore without a limit.
            ALTER TABLE elements ADD COLUMN retain_until timestamptz;
            UPDATE elements SET retention_source = CASE WHEN requested THEN 'request' ELSE 'not-requested' END;

            -- AES-256-GCM under data key key_id; the AAD binds key_id, event_id, namespace, element.
            CREATE TABLE element_values (
                event_id          text NOT NULL,
                tenant            text NOT NULL,
                namespace         text NOT NULL,
                element           text NOT NULL,
                key_id            text NOT NULL,
                nonce             bytea NOT NULL,
                ciphertext        bytea NOT NULL,
                retain_until      timestamptz NOT NULL,
                stored_at         timestamptz NOT NULL,
                PRIMARY KEY (event_id, namespace, element, retain_until)
            ) PARTITION BY RANGE (retain_until);
            CREATE INDEX element_values_retain_until ON element_values (retain_until);
            CREATE INDEX element_values_tenant ON element_values (tenant);
            -- Dated partitions (element_values_dYYYYMMDD_YYYYMMDD) are created on demand and ahead by the purge loop.
            CREATE TABLE element_values_unlimited PARTITION OF element_values FOR VALUES FROM ('infinity') TO (MAXVALUE);

            -- Outcomes with sealed claims, so the purge can strip them once published.
            ALTER TABLE outbox ADD COLUMN has_claims boolean NOT NULL DEFAULT false;
            CREATE INDEX outbox_claims ON outbox (published_at) WHERE has_claims;
            """),
        // Analytics over the non-personal outcome facts; hours are UTC.
        Migration(version: 3, name: "outcome analytics views", sql: """
            CREATE VIEW outcome_counts_hourly AS
            SELECT date_trunc('hour', verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow,
                   COALESCE(doc_type, '(none)') AS doc_type, COALESCE(issuer_country, '(none)') AS issuer_country,
                   verdict, count(*)::bigint AS count
            FROM results GROUP BY 1, 2, 3, 4, 5, 6;

            -- One row per reason code; a verified result counts under 'none', and a
            -- result with several reasons under each of them.
            CREATE VIEW outcome_facts_hourly AS
            SELECT date_trunc('hour', r.verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(r.tenant, '(none)') AS tenant, COALESCE(r.flow, '(none)') AS flow,
                   COALESCE(r.doc_type, '(none)') AS doc_type, COALESCE(r.issuer_country, '(none)') AS issuer_country,
                   r.verdict, reason.code AS reason_code, count(*)::bigint AS count
            FROM results r
            CROSS JOIN LATERAL unnest(CASE WHEN cardinality(r.reason_codes) = 0 THEN ARRAY['none']::text[] ELSE r.reason_codes END) AS reason(code)
            GROUP BY 1, 2, 3, 4, 5, 6, 7;

            CREATE VIEW processing_latency_hourly AS
            SELECT date_trunc('hour', verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow, count(*)::bigint AS count,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY processing_seconds) AS p50,
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY processing_seconds) AS p90,
                   percentile_cont(0.99) WITHIN GROUP (ORDER BY processing_seconds) AS p99
            FROM results GROUP BY 1, 2, 3;
            """),
        // The foreign key is checked row by row (one index probe and key-share lock per
        // element row, for every element of every event), a large share of the batch
        // write's server time. Element rows are only written in the transaction that inserts
        // their result row, and results are never deleted, so the check cannot fail and the
        // cascade never runs.
        Migration(version: 4, name: "elements no longer checked against results row by row", sql: """
            ALTER TABLE elements DROP CONSTRAINT IF EXISTS elements_event_id_fkey;
            """),
        // Outcome payloads are compressed when stored; LZ4 costs the batch
        // write a fraction of pglz's server time. Servers built without LZ4 keep pglz.
        Migration(version: 5, name: "outbox payloads compressed with LZ4 where the server has it", sql: """
            DO $$
            BEGIN
                ALTER TABLE outbox ALTER COLUMN payload SET COMPRESSION lz4;
            EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
                NULL;
            END
            $$;
            """),
        // Ids and element names are identifiers, not words: compared byte by byte
        // ("C") instead of by the database's linguistic collation, whose strcoll calls
        // make every index on them a large part of the insert's server time.
        // Every column these are joined on changes together, so joins keep one
        // collation. Tenant columns keep the default: the analytics views read them.
        // Rebuilds the indexes on these columns (an exclusive lock while it runs).
        Migration(version: 6, name: "ids and element names compare bytewise", sql: """
            ALTER TABLE results ALTER COLUMN event_id TYPE text COLLATE "C";
            ALTER TABLE elements ALTER COLUMN event_id TYPE text COLLATE "C",
                ALTER COLUMN namespace TYPE text COLLATE "C", ALTER COLUMN element TYPE text COLLATE "C";
            ALTER TABLE element_values ALTER COLUMN event_id TYPE text COLLATE "C",
                ALTER COLUMN namespace TYPE text COLLATE "C", ALTER COLUMN element TYPE text COLLATE "C";
            ALTER TABLE nonces ALTER COLUMN event_id TYPE text COLLATE "C";
            ALTER TABLE outbox ALTER COLUMN id TYPE text COLLATE "C", ALTER COLUMN event_id TYPE text COLLATE "C";
            """),
        // Every event writes a row per disclosed element (22 in Apple's sample), and a
        // primary key over (event_id, namespace, element) is the largest part of the
        // table and of its insert cost. Nothing looks rows up by name; every reader
        // goes by event. An index on event_id alone stores each event's rows as one
        // deduplicated entry: a smaller table and a cheaper insert. Uniqueness stays
        // where it is decided: the writer keeps one row per name (`RetentionWriter`), and
        // element rows are inserted only with their new results row, in its transaction.
        Migration(version: 7, name: "elements indexed by event alone", sql: """
            ALTER TABLE elements DROP CONSTRAINT IF EXISTS elements_pkey;
            CREATE INDEX IF NOT EXISTS elements_event_id ON elements (event_id);
            """),
        // A row per element is most of the server's CPU per event (a heap
        // tuple, an index entry and a WAL record for each of ~23 rows an event).
        // Elements of one event, namespace and retention decision share a row
        // that lists their names: 3 or 4 rows an event of Apple's kind.
        // `elements` becomes a view with the table's former columns and a
        // row per element, so readers' queries read as they did; it is not
        // insertable. Rewrites the element table (an exclusive lock while it runs).
        Migration(version: 8, name: "elements of an event grouped by namespace and decision; elements a view", sql: """
            CREATE TABLE element_groups (
                event_id          text COLLATE "C" NOT NULL,
                namespace         text COLLATE "C" NOT NULL,
                elements          text[] COLLATE "C" NOT NULL,
                requested         boolean NOT NULL,
                retention_intent  text NOT NULL CHECK (retention_intent IN ('willNotStore', 'mayStore')),
                retention_days    integer,
                retention_source  text NOT NULL CHECK (retention_source IN ('request', 'tenant-default', 'not-requested', 'none')),
                retention_capped  boolean NOT NULL,
                retain_until      timestamptz
            );
            INSERT INTO element_groups (event_id, namespace, elements, requested, retention_intent, retention_days,
                                        retention_source, retention_capped, retain_until)
            SELECT event_id, namespace, array_agg(element ORDER BY element), requested, retention_intent, retention_days,
                   retention_source, retention_capped, retain_until
            FROM elements
            GROUP BY event_id, namespace, requested, retention_intent, retention_days, retention_source, retention_capped, retain_until;
            DROP TABLE elements;
            CREATE INDEX element_groups_event_id ON element_groups (event_id);
            CREATE VIEW elements AS
            SELECT g.event_id, g.namespace, e.element, g.requested, g.retention_intent, g.retention_days,
                   g.retention_source, g.retention_capped, g.retain_until
            FROM element_groups g CROSS JOIN LATERAL unnest(g.elements) AS e(element);
            """),
        // Offsets a group passed over without reading them (OffsetGap): the
        // durable trace of records lost to retention or a recreated topic.
        Migration(version: 9, name: "offset gaps", sql: """
            CREATE TABLE consumer_gaps (
                consumer_group    text NOT NULL,
                topic             text NOT NULL,
                partition         integer NOT NULL,
                from_offset       bigint NOT NULL,
                to_offset         bigint NOT NULL,
                kind              text NOT NULL CHECK (kind IN ('deleted', 'truncated')),
                skipped_offsets   bigint CHECK (skipped_offsets > 0),
                policy            text NOT NULL CHECK (policy IN ('skip', 'stop')),
                worker_id         text NOT NULL,
                detected_at       timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer_group, topic, partition, from_offset, kind)
            );
            """),
        // The session API's sessions (`veridoc serve`): what a request was
        // issued with, never what the wallet disclosed. `outcome` is the
        // outcome event as the worker stored it (values only sealed), written
        // in the result's own transaction.
        Migration(version: 10, name: "sessions", sql: """
            CREATE TABLE sessions (
                tenant           text NOT NULL,
                id               uuid NOT NULL,
                flow             text NOT NULL CHECK (flow IN ('apple-wallet-app', 'apple-wallet-web', 'iso-device-response')),
                audience         text NOT NULL,
                doc_type         text NOT NULL,
                requested        text NOT NULL,
                nonce            bytea NOT NULL,
                encryption_info  text,
                reference        text,
                created_at       timestamptz NOT NULL,
                expires_at       timestamptz NOT NULL,
                response_digest  bytea,
                submitted_at     timestamptz,
                status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'verified', 'rejected')),
                outcome          text,
                completed_at     timestamptz,
                PRIMARY KEY (tenant, id)
            );
            CREATE INDEX sessions_expires_at ON sessions (expires_at);
            """),
        // Apple's test conditions: a test tenant's outcomes are test_verified or
        // test_rejected and marked; analytics read production unless asked.
        // The constraints are added NOT VALID: they hold for every row written
        // from now on, and the rows already there satisfy them (the old verdict
        // and status checks were stricter, the new columns take their default),
        // so no scan of a large results table runs under the migration's
        // exclusive lock; a constant default adds the columns without a rewrite.
        Migration(version: 11, name: "test assurance of results and sessions", sql: """
            ALTER TABLE results DROP CONSTRAINT results_verdict_check;
            ALTER TABLE results ADD CONSTRAINT results_verdict_check
                CHECK (verdict IN ('verified', 'rejected', 'test_verified', 'test_rejected')) NOT VALID;
            ALTER TABLE results ADD COLUMN assurance text NOT NULL DEFAULT 'production';
            ALTER TABLE results ADD COLUMN test_kind text;
            ALTER TABLE results ADD CONSTRAINT results_assurance_check CHECK (assurance IN ('production', 'test')) NOT VALID;
            ALTER TABLE results ADD CONSTRAINT results_test_kind_check CHECK (test_kind IN ('simulator', 'developer-profile')) NOT VALID;
            ALTER TABLE results ADD CONSTRAINT results_test_verdicts
                CHECK ((assurance = 'test') = (verdict IN ('test_verified', 'test_rejected')) AND (test_kind IS NULL OR assurance = 'test')) NOT VALID;
            ALTER TABLE sessions DROP CONSTRAINT sessions_status_check;
            ALTER TABLE sessions ADD CONSTRAINT sessions_status_check
                CHECK (status IN ('pending', 'processing', 'verified', 'rejected', 'test_verified', 'test_rejected')) NOT VALID;

            CREATE OR REPLACE VIEW outcome_counts_hourly AS
            SELECT date_trunc('hour', verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow,
                   COALESCE(doc_type, '(none)') AS doc_type, COALESCE(issuer_country, '(none)') AS issuer_country,
                   verdict, count(*)::bigint AS count, assurance
            FROM results GROUP BY 1, 2, 3, 4, 5, 6, 8;

            CREATE OR REPLACE VIEW outcome_facts_hourly AS
            SELECT date_trunc('hour', r.verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(r.tenant, '(none)') AS tenant, COALESCE(r.flow, '(none)') AS flow,
                   COALESCE(r.doc_type, '(none)') AS doc_type, COALESCE(r.issuer_country, '(none)') AS issuer_country,
                   r.verdict, reason.code AS reason_code, count(*)::bigint AS count, r.assurance
            FROM results r
            CROSS JOIN LATERAL unnest(CASE WHEN cardinality(r.reason_codes) = 0 THEN ARRAY['none']::text[] ELSE r.reason_codes END) AS reason(code)
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 9;

            CREATE OR REPLACE VIEW processing_latency_hourly AS
            SELECT date_trunc('hour', verified_at AT TIME ZONE 'UTC') AS hour,
                   COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow, count(*)::bigint AS count,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY processing_seconds) AS p50,
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY processing_seconds) AS p90,
                   percentile_cont(0.99) WITHIN GROUP (ORDER BY processing_seconds) AS p99,
                   assurance
            FROM results GROUP BY 1, 2, 3, 8;
            """),
        // Element groups move into the result's row (`ElementGroupsColumn`):
        // their own rows, three or four an event with an index entry each, cost
        // the database more than the row already written. Nothing is copied or
        // rewritten: the table keeps the rows stored so far under a new name,
        // the view `element_groups` reads both, and `elements` reads the view.
        // A worker of an earlier version finds a view where it inserted and
        // retries its batch until it is stopped; nothing it wrote is lost.
        Migration(version: 12, name: "element groups in the results row; element_groups a view", sql: """
            ALTER TABLE results ADD COLUMN element_groups json;
            DROP VIEW elements;
            ALTER TABLE element_groups RENAME TO element_groups_before_v12;
            ALTER INDEX element_groups_event_id RENAME TO element_groups_before_v12_event_id;
            CREATE VIEW element_groups AS
            SELECT r.event_id, g.namespace COLLATE "C" AS namespace, g.elements COLLATE "C" AS elements, g.requested,
                   g.intent AS retention_intent, g.days AS retention_days, g.source AS retention_source,
                   g.capped AS retention_capped, g.until AS retain_until
            FROM results r
            CROSS JOIN LATERAL json_to_recordset(r.element_groups)
                AS g(namespace text, elements text[], requested boolean, intent text, days integer, source text, capped boolean, until timestamptz)
            UNION ALL
            SELECT event_id, namespace, elements, requested, retention_intent, retention_days, retention_source, retention_capped, retain_until
            FROM element_groups_before_v12;
            CREATE VIEW elements AS
            SELECT g.event_id, g.namespace, e.element, g.requested, g.retention_intent, g.retention_days,
                   g.retention_source, g.retention_capped, g.retain_until
            FROM element_groups g CROSS JOIN LATERAL unnest(g.elements) AS e(element);
            """),
        // How the holder's device authenticated (docs/device-authentication.md):
        // a signature, or a MAC with the registered reader that signed for it.
        // Catalog only: the columns have no default, and the check is NOT VALID
        // (the rows already there hold NULL, which it allows).
        Migration(version: 13, name: "device authentication of results", sql: """
            ALTER TABLE results ADD COLUMN device_auth text;
            ALTER TABLE results ADD COLUMN device_reader text;
            ALTER TABLE results ADD CONSTRAINT results_device_auth_check
                CHECK ((device_auth IS NULL AND device_reader IS NULL) OR (device_auth = 'signature' AND device_reader IS NULL)
                       OR (device_auth = 'mac' AND device_reader IS NOT NULL)) NOT VALID;
            """),
        // Revocation (docs/revocation.md): the status a result was accepted
        // or rejected with, the first revoked or suspended found after it was
        // accepted, and the references of accepted results kept while their
        // values are, for those re-checks. Catalog-only on `results`, as 13.
        Migration(version: 14, name: "revocation status of results; status references", sql: """
            ALTER TABLE results ADD COLUMN revocation_status text;
            ALTER TABLE results ADD COLUMN later_status text;
            ALTER TABLE results ADD COLUMN later_status_at timestamptz;
            ALTER TABLE results ADD CONSTRAINT results_revocation_status_check
                CHECK (revocation_status IS NULL OR revocation_status IN ('none', 'not_checked', 'valid', 'revoked', 'suspended', 'undetermined')) NOT VALID;
            ALTER TABLE results ADD CONSTRAINT results_later_status_check
                CHECK ((later_status IS NULL AND later_status_at IS NULL)
                       OR (later_status IN ('revoked', 'suspended') AND later_status_at IS NOT NULL)) NOT VALID;
            CREATE TABLE status_references (
                event_id text COLLATE "C" NOT NULL,
                document integer NOT NULL,
                list_kind text NOT NULL CHECK (list_kind IN ('status_list', 'identifier_list')),
                tenant text COLLATE "C" NOT NULL,
                list_uri text COLLATE "C" NOT NULL,
                list_index bigint,
                list_id bytea,
                reference_certificate bytea,
                document_signer bytea NOT NULL,
                issuing_anchor bytea NOT NULL,
                accepted_status text NOT NULL CHECK (accepted_status IN ('valid', 'undetermined')),
                retain_until timestamptz NOT NULL,
                PRIMARY KEY (event_id, document, list_kind),
                CHECK ((list_kind = 'status_list' AND list_index IS NOT NULL AND list_id IS NULL)
                       OR (list_kind = 'identifier_list' AND list_id IS NOT NULL AND list_index IS NULL)));
            CREATE INDEX status_references_list ON status_references (list_kind, list_uri, event_id);
            CREATE INDEX status_references_retain_until ON status_references (retain_until);
            """),
        // The revocation lists the workers fetched, as fetched (signed tokens,
        // public issuer data): every worker, and a restarted one, starts from
        // them instead of fetching again (docs/revocation.md).
        Migration(version: 15, name: "status lists shared by workers", sql: """
            CREATE TABLE status_lists (
                list_kind text NOT NULL CHECK (list_kind IN ('status_list', 'identifier_list')),
                list_uri text COLLATE "C" NOT NULL,
                token bytea NOT NULL,
                etag text,
                last_modified text,
                fetched_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                PRIMARY KEY (list_kind, list_uri));
            CREATE INDEX status_lists_expires_at ON status_lists (expires_at);
            """),
        // X.509 CRLs that document signer and IACA certificates name, shared
        // like the list tokens (docs/revocation.md).
        Migration(version: 16, name: "certificate revocation lists shared by workers", sql: """
            ALTER TABLE status_lists DROP CONSTRAINT status_lists_list_kind_check;
            ALTER TABLE status_lists ADD CONSTRAINT status_lists_list_kind_check
                CHECK (list_kind IN ('status_list', 'identifier_list', 'crl'));
            """),
        // Accepted documents whose certificates name CRLs (and whose MSO
        // names no list) keep a reference too, so that a document signer
        // revoked after acceptance is found (docs/revocation.md).
        Migration(version: 17, name: "CRL references of accepted results", sql: """
            ALTER TABLE status_references DROP CONSTRAINT status_references_list_kind_check;
            ALTER TABLE status_references DROP CONSTRAINT status_references_check;
            ALTER TABLE status_references ADD CONSTRAINT status_references_list_kind_check
                CHECK (list_kind IN ('status_list', 'identifier_list', 'crl'));
            ALTER TABLE status_references ADD CONSTRAINT status_references_check
                CHECK ((list_kind = 'status_list' AND list_index IS NOT NULL AND list_id IS NULL)
                       OR (list_kind = 'identifier_list' AND list_id IS NOT NULL AND list_index IS NULL)
                       OR (list_kind = 'crl' AND list_index IS NULL AND list_id IS NULL));
            """),
        // Age checks (`age(atLeast:)`) of a result, for analytics: the ages
        // asked, never the answers (the holder's, in the delivered outcome
        // only) nor what answered them, which can tell the answer.
        // Catalog-only on `results`, as 13.
        Migration(version: 18, name: "age checks of results", sql: """
            ALTER TABLE results ADD COLUMN age_checks text[];
            """),
        // Sessions of OpenID4VP over the Digital Credentials API. The
        // constraint is checked against the rows already there, which all
        // hold one of the older flows.
        Migration(version: 19, name: "openid4vp-dc-api sessions", sql: """
            ALTER TABLE sessions DROP CONSTRAINT sessions_flow_check,
                ADD CONSTRAINT sessions_flow_check
                CHECK (flow IN ('apple-wallet-app', 'apple-wallet-web', 'iso-device-response', 'openid4vp-dc-api'));
            """),
        // A creation retried with its Idempotency-Key finds its session; an
        // integrator finds its sessions by its own reference.
        Migration(version: 20, name: "session idempotency keys and references", sql: """
            ALTER TABLE sessions ADD COLUMN idempotency_key text, ADD COLUMN request_digest bytea;
            CREATE UNIQUE INDEX sessions_idempotency_key ON sessions (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
            CREATE INDEX sessions_reference ON sessions (tenant, reference, created_at DESC) WHERE reference IS NOT NULL;
            """),
        // Every session ends: one still processing at its expiry fails with a
        // reason. A submission is kept with its session until the broker has
        // its request event, so a broker outage delays it instead of losing it.
        Migration(version: 21, name: "failed sessions and durable submissions", sql: """
            ALTER TABLE sessions DROP CONSTRAINT sessions_status_check;
            ALTER TABLE sessions ADD CONSTRAINT sessions_status_check
                CHECK (status IN ('pending', 'processing', 'verified', 'rejected', 'test_verified', 'test_rejected', 'failed')) NOT VALID;
            ALTER TABLE sessions ADD COLUMN failure_reason text;
            CREATE INDEX sessions_processing ON sessions (expires_at) WHERE status = 'processing';
            CREATE TABLE session_submissions (
                tenant         text NOT NULL,
                session_id     uuid NOT NULL,
                kafka_key      bytea NOT NULL,
                event          bytea NOT NULL,
                created_at     timestamptz NOT NULL DEFAULT now(),
                claimed_until  timestamptz,
                PRIMARY KEY (tenant, session_id),
                FOREIGN KEY (tenant, session_id) REFERENCES sessions (tenant, id) ON DELETE CASCADE
            );
            CREATE INDEX session_submissions_created_at ON session_submissions (created_at);
            """),
        // Webhook deliveries, written in the transaction that writes their
        // outcome, so a crash loses none; retried on a schedule until
        // delivered or dead. An endpoint that answered 410 is disabled until
        // an operator enables it again.
        Migration(version: 22, name: "webhook deliveries", sql: """
            CREATE TABLE webhook_deliveries (
                tenant           text NOT NULL,
                endpoint         text NOT NULL,
                webhook_id       text NOT NULL,
                event_id         text NOT NULL,
                event_type       text NOT NULL,
                payload          text,
                has_claims       boolean NOT NULL DEFAULT false,
                state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts         integer NOT NULL DEFAULT 0,
                next_attempt_at  timestamptz NOT NULL DEFAULT now(),
                claimed_by       text,
                claimed_until    timestamptz,
                last_status      integer,
                last_error       text,
                created_at       timestamptz NOT NULL DEFAULT now(),
                finished_at      timestamptz,
                PRIMARY KEY (tenant, endpoint, webhook_id)
            );
            CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant, endpoint, next_attempt_at) WHERE state = 'pending';
            CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending';
            CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
            CREATE TABLE webhook_endpoints (
                tenant           text NOT NULL,
                endpoint         text NOT NULL,
                disabled_at      timestamptz NOT NULL DEFAULT now(),
                disabled_status  integer,
                PRIMARY KEY (tenant, endpoint)
            );
            """),
        // Each webhook endpoint's rate as one token bucket for every worker,
        // and its attempts under way (its claimed pending rows) found without
        // reading its backlog (WebhookEndpointLimits): its limits hold for
        // the deployment.
        Migration(version: 23, name: "webhook endpoint limits across workers", sql: """
            CREATE TABLE webhook_rate_buckets (
                tenant       text NOT NULL,
                endpoint     text NOT NULL,
                tokens       double precision NOT NULL,
                refilled_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
                PRIMARY KEY (tenant, endpoint)
            );
            CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (tenant, endpoint, claimed_until)
                WHERE state = 'pending' AND claimed_until IS NOT NULL;
            """),
    ]

    /// The newest version this binary knows.
    public static let latestVersion = all.map(\.version).max() ?? 0

    /// The advisory-lock key under which migrations run, so that workers
    /// starting together apply each version once.
    static let lockKey: Int64 = 0x7665_7269_646f_6331  // "veridoc1"

    /// Applies every version the database lacks, under the advisory lock.
    /// Returns the versions applied now. A database a newer binary migrated
    /// is left alone: `SchemaError.newerThanBinary`.
    @discardableResult
    public static func apply(on connection: PostgresConnection) throws -> [Int] {
        try connection.withAdvisoryLock(lockKey) {
            try connection.executeScript("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let applied = try connection.execute("SELECT version FROM schema_migrations")
            let done = Set((0..<applied.rowCount).compactMap { applied.int($0, "version") }.map(Int.init))
            try requireKnown(done.max())
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

    /// Refuses a database whose schema a newer binary migrated (for the
    /// commands that read and write it without migrating). A database not
    /// migrated at all passes: the statements then fail on their own.
    public static func checkVersion(on connection: PostgresConnection) throws {
        let table = try connection.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
        guard table.bool(0, "present") == true else { return }
        try requireKnown(try connection.execute("SELECT max(version) AS version FROM schema_migrations").int(0, "version").map(Int.init))
    }

    /// Its tables, columns and constraints may have changed in ways this
    /// binary's statements do not know (a column it does not fill, a value a
    /// new constraint refuses): better not to start than to write wrong rows.
    private static func requireKnown(_ applied: Int?) throws(SchemaError) {
        if let applied, applied > latestVersion { throw .newerThanBinary(database: applied, binary: latestVersion) }
    }
}

/// The database's schema does not fit this binary.
public enum SchemaError: Error, Equatable, CustomStringConvertible {
    /// Migrated by a newer binary: versions this one does not know.
    case newerThanBinary(database: Int, binary: Int)

    /// Stable, for logs and alerts.
    public var code: String {
        switch self {
        case .newerThanBinary: "schema.newer_than_binary"
        }
    }

    public var description: String {
        switch self {
        case .newerThanBinary(let database, let binary):
            "the database's schema is at version \(database), this binary knows up to \(binary): upgrade veridoc"
        }
    }
}
