import Dispatch
import Foundation
import Kafka
@testable import Pipeline
import Observability
import Postgres
import Storage
import Retention
import Synchronization
import TestIssuer
import Testing
import TestSupport
@testable import Verification

/// `ResultStore` against a real PostgreSQL: the pipelined write (decide, then
/// write) must store exactly what the step-by-step write stores, whatever the
/// batch holds, and a batch another writer overtakes must still come out right.
@Suite(.enabled(if: Services.available, Services.skipMessage), .serialized)
struct ResultStoreTests {
    static let ns = TestIssuer.Credential.mDLNameSpace

    final class Harness {
        var factory: TestIssuer.EventFactory
        let work: JobWork
        let tracker = PartitionTracker()
        let partition = TopicPartition("veridoc.requests", 0)
        var offset: Int64 = 0
        let keys: DataKeyRing

        init() throws {
            factory = try TestIssuer.EventFactory(now: Date(), seed: UInt64.random(in: 0...UInt64.max))
            let verifier = try factory.verifier()
            keys = try DataKeyRing(keys: ["k1": (0..<32).map { _ in UInt8.random(in: 0...255) }], activeID: "k1")
            work = JobWork(verifier: verifier, intake: RecordIntake(parser: verifier.eventParser),
                           retention: RetentionWriter(directory: verifier.directory, keys: keys), metrics: PipelineMetrics(), log: Logger(minimum: .error))
            tracker.assign(partition, startingAt: 0)
        }

        /// An event that asks to keep one element's value for five days.
        func event() throws -> TestIssuer.GeneratedEvent {
            var options = TestIssuer.EventOptions()
            options.requestedElements = [RequestedElement(namespace: ResultStoreTests.ns, element: "given_name", retention: .mayStore(days: 5))]
            return try factory.event(.appleWalletApp, options: options)
        }

        /// The event as the pool hands it to the persister.
        func completion(_ event: TestIssuer.GeneratedEvent) throws -> Completion {
            let ticket = try #require(tracker.register(partition, offset: offset))
            let message = KafkaMessage(topicPartition: partition, offset: offset, key: Array("k".utf8), value: event.json())
            offset += 1
            guard case .completion(let completion) = work.complete(Job(ticket: ticket, key: message.key, receivedAt: Date(), content: .unread(message))) else {
                throw TestFailure("not a completion")
            }
            return completion
        }

        /// A store with its own record of the database's value partitions.
        func store(_ connection: PostgresConnection) -> ResultStore {
            ResultStore(connection: connection, groupID: "g", workerID: "w", nonceKey: Array(repeating: 7, count: 32), outboxClaim: 60,
                        retention: RetentionWriter(directory: work.verifier.directory, keys: keys))
        }
    }

    /// Every row of the tables a batch writes, without the columns that hold
    /// the time of the write itself (and the values' random nonces and ciphertexts).
    static func snapshot(_ connection: PostgresConnection) throws -> [String] {
        var lines: [String] = []
        let tables = [
            ("results", "'{}'::text[]"), ("elements", "'{}'::text[]"), ("nonces", "'{used_at}'::text[]"),
            ("outbox", "'{created_at,claimed_until}'::text[]"), ("consumer_positions", "'{updated_at}'::text[]"),
            ("element_values", "'{nonce,ciphertext,stored_at}'::text[]"),
        ]
        for (table, volatile) in tables {
            let rows = try connection.execute("SELECT (to_jsonb(t) - \(volatile))::text AS row FROM \(table) t ORDER BY 1")
            lines += (0..<rows.rowCount).map { "\(table) \(rows.string($0, "row") ?? "")" }
        }
        return lines
    }

    @Test func aBatchOfNewEventsIsPipelinedAndStoresWhatStepByStepStores() throws {
        let harness = try Harness()
        let completions = try (0..<5).map { _ in try harness.completion(try harness.event()) }
        #expect(completions.allSatisfy { $0.result?.isVerified == true })
        let positions = [harness.partition: Int64(completions.count)]

        let pipelinedDatabase = try TestDatabase(), stepDatabase = try TestDatabase()
        let pipelinedConnection = try pipelinedDatabase.connect(), stepConnection = try stepDatabase.connect()
        defer { pipelinedConnection.close(); stepConnection.close() }
        _ = try Migrations.apply(on: pipelinedConnection)
        _ = try Migrations.apply(on: stepConnection)

        let pipelined = try harness.store(pipelinedConnection).write(completions, positions: positions)
        let stepByStep = try harness.store(stepConnection).write(completions, positions: positions, pipelining: false)
        #expect(pipelined.path == .pipelined)
        #expect(stepByStep.path == .stepByStep)
        #expect(pipelined.duplicates == 0 && stepByStep.duplicates == 0)
        #expect(pipelined.stored.map(\.requestID) == stepByStep.stored.map(\.requestID))
        #expect(pipelined.stored.map(\.report.reasons.count) == stepByStep.stored.map(\.report.reasons.count))
        #expect(pipelined.outbox.map(\.payload) == stepByStep.outbox.map(\.payload))

        let written = try Self.snapshot(pipelinedConnection)
        #expect(written == (try Self.snapshot(stepConnection)))
        // The batch really wrote every kind of row.
        for table in ["results", "elements", "nonces", "outbox", "consumer_positions", "element_values"] {
            #expect(written.contains { $0.hasPrefix(table + " ") }, "no \(table) rows")
        }
        #expect(try pipelinedConnection.execute("SELECT count(*) AS n FROM results").int(0, "n") == 5)
        // Ids and names compare bytewise, and the tables still join on them.
        let collations = try pipelinedConnection.execute("""
            SELECT count(*) AS n FROM information_schema.columns
            WHERE table_schema = current_schema() AND collation_name = 'C'
              AND (table_name, column_name) IN (('results', 'event_id'), ('elements', 'event_id'), ('elements', 'namespace'),
                  ('elements', 'element'), ('element_values', 'event_id'), ('element_values', 'namespace'), ('element_values', 'element'),
                  ('nonces', 'event_id'), ('outbox', 'id'), ('outbox', 'event_id'))
            """)
        #expect(collations.int(0, "n") == 10)
        let joined = try pipelinedConnection.execute("""
            SELECT count(*) AS n FROM results r JOIN elements e USING (event_id) JOIN outbox o ON o.event_id = r.event_id
            JOIN nonces n ON n.event_id = r.event_id
            LEFT JOIN element_values v ON v.event_id = e.event_id AND v.namespace = e.namespace AND v.element = e.element
            WHERE r.tenant = n.tenant AND (v.tenant IS NULL OR v.tenant = r.tenant)
            """)
        #expect(joined.int(0, "n") == (try pipelinedConnection.execute("SELECT count(*) AS n FROM elements").int(0, "n")))
    }

    /// Redeliveries, replays and an id twice are decided before any row goes
    /// in (no rolled-back attempt), and come out as the step-by-step write
    /// decides them, batch after batch, on a database of its own.
    @Test func redeliveriesReplaysAndRepeatsAreDecidedBeforeTheRowsGoIn() throws {
        let harness = try Harness()
        let database = try TestDatabase(), stepDatabase = try TestDatabase()
        let connection = try database.connect(), stepConnection = try stepDatabase.connect()
        defer { connection.close(); stepConnection.close() }
        _ = try Migrations.apply(on: connection)
        _ = try Migrations.apply(on: stepConnection)
        let store = harness.store(connection)
        /// Writes `batch` both ways; the pipelined answer.
        func write(_ batch: [Completion], through offset: Int64) throws -> ResultStore.Written {
            let positions = [harness.partition: offset]
            let stepByStep = try harness.store(stepConnection).write(batch, positions: positions, pipelining: false)
            let written = try store.write(batch, positions: positions)
            #expect(written.path == .pipelined)
            #expect(written.duplicates == stepByStep.duplicates)
            #expect(written.stored.map(\.requestID) == stepByStep.stored.map(\.requestID))
            #expect(written.stored.map(\.verdict) == stepByStep.stored.map(\.verdict))
            #expect(written.outbox.map(\.payload) == stepByStep.outbox.map(\.payload))
            return written
        }

        let first = try (0..<3).map { _ in try harness.event() }
        #expect(try write(try first.map(harness.completion), through: 3).duplicates == 0)

        // An event stored before, another's nonce under a new id, and one new event.
        var replay = first[1]
        replay.attributes["id"] = "replay-of-\(first[1].id!)"
        let fresh = try harness.event()
        let mixed = try write([try harness.completion(first[0]), try harness.completion(replay), try harness.completion(fresh)], through: 6)
        #expect(mixed.duplicates == 1)
        #expect(mixed.stored.map(\.requestID) == [replay.id, fresh.id])
        let results = try database.results()
        #expect(results[replay.id!]?.reasons == ["request.nonce_reused"])
        #expect(results[fresh.id!]?.verdict == "verified")
        #expect(results.count == 5)
        // Each stored event has its rows once; the replay keeps no values and claims no nonce.
        #expect(try connection.execute("SELECT count(*) AS n FROM outbox").int(0, "n") == 5)
        #expect(try connection.execute("SELECT count(DISTINCT event_id) AS n FROM elements").int(0, "n") == 5)
        #expect(try Self.repeatedElementRows(connection) == 0)
        // Per verified event, its tenant's nonce and its presentation (deployment-wide scope, tenant '').
        #expect(try connection.execute("SELECT count(*) AS n FROM nonces WHERE tenant <> ''").int(0, "n") == 4)
        #expect(try connection.execute("SELECT count(*) AS n FROM nonces WHERE tenant = ''").int(0, "n") == 4)
        #expect(try connection.execute("SELECT count(*) AS n FROM element_values").int(0, "n") == 4)
        #expect(try connection.execute("SELECT next_offset FROM consumer_positions").int(0, "next_offset") == 6)

        // The same new event twice in one batch, and a new event replayed within the batch.
        let twice = try harness.event()
        let original = try harness.event()
        var replayedAtOnce = original
        replayedAtOnce.attributes["id"] = "replay-of-\(original.id!)"
        let repeated = try write([try harness.completion(twice), try harness.completion(twice), try harness.completion(original),
                                  try harness.completion(replayedAtOnce)], through: 10)
        #expect(repeated.stored.map(\.requestID) == [twice.id, original.id, replayedAtOnce.id])
        #expect(repeated.duplicates == 1)
        #expect(try database.results()[replayedAtOnce.id!]?.reasons == ["request.nonce_reused"])
        #expect(try database.results().count == 8)
        #expect(try Self.repeatedElementRows(connection) == 0)

        #expect(try write([try harness.completion(try harness.event())], through: 11).duplicates == 0)
        #expect(try database.results().count == 9)
        #expect(try Self.snapshot(connection) == (try Self.snapshot(stepConnection)))
    }

    /// Another writer (a worker that lost the partition and has not noticed
    /// yet) holds an uncommitted row of one of the batch's events: the
    /// batch's results insert waits for it and, once it commits, finds the row,
    /// so that event is a duplicate with no row of it twice; the rest goes in.
    @Test func anEventStoredByAnotherWriterMeanwhileIsADuplicate() throws {
        let harness = try Harness()
        let database = try TestDatabase()
        let connection = try database.connect(), other = try database.connect(), watcher = try database.connect()
        defer { connection.close(); other.close(); watcher.close() }
        _ = try Migrations.apply(on: connection)
        let contested = try harness.event(), alone = try harness.event()
        let batch = [try harness.completion(contested), try harness.completion(alone)]
        // The other writer's row, inserted and not yet committed.
        try other.execute("BEGIN")
        _ = try other.execute("""
            INSERT INTO results (event_id, verdict, reason_codes, received_at, verified_at, processing_seconds, source_topic, source_partition, source_offset)
            VALUES ($1, 'verified', '{}', now(), now(), 0, 'veridoc.requests', 0, 0)
            """, [.text(contested.id!)])

        let pid = try #require(connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
        let committed = DispatchSemaphore(value: 0)
        let sawTheBatchWait = Atomic<Bool>(false)
        Thread.detachNewThread {
            // Commit once the batch waits on the other writer's row, so the order is certain.
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                let waiting = try? watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", [.int(pid)])
                if waiting?.string(0, "wait_event_type") == "Lock" {
                    sawTheBatchWait.store(true, ordering: .sequentiallyConsistent)
                    break
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            _ = try? other.execute("COMMIT")
            committed.signal()
        }
        let written = try harness.store(connection).write(batch, positions: [harness.partition: 2])
        #expect(committed.wait(timeout: .now() + 30) == .success)
        let waited = sawTheBatchWait.load(ordering: .sequentiallyConsistent)
        #expect(waited, "the batch never waited for the other writer's row")
        #expect(written.path == .pipelined)
        #expect(written.duplicates == 1)
        #expect(written.stored.map(\.requestID) == [alone.id])
        #expect(try connection.execute("SELECT count(*) AS n FROM results").int(0, "n") == 2)
        #expect(try connection.execute("SELECT count(*) AS n FROM elements WHERE event_id = $1", [.text(contested.id!)]).int(0, "n") == 0)
        #expect(try connection.execute("SELECT count(*) AS n FROM outbox").int(0, "n") == 1)
        #expect(try Self.repeatedElementRows(connection) == 0)
        #expect(try connection.execute("SELECT next_offset FROM consumer_positions").int(0, "next_offset") == 2)
    }

    /// Element rows that name the same element of the same event twice. The
    /// table has no unique key (migration 7): the writer and the results row's
    /// conflict check are what keep each element once.
    static func repeatedElementRows(_ connection: PostgresConnection) throws -> Int64 {
        try connection.execute("""
            SELECT count(*) AS n FROM (SELECT 1 FROM elements GROUP BY event_id, namespace, element HAVING count(*) > 1) repeated
            """).int(0, "n") ?? -1
    }

    /// A database made by an earlier release (migrations 1-6, element rows in
    /// it) takes migrations 7 and 8: the rows are kept, gathered into
    /// `element_groups` by event, namespace and decision, and read back through
    /// the `elements` view as they were written; migration 12 keeps them there
    /// and the next batch is written into the results row; both are read back
    /// by event through an index.
    @Test func migrationsSevenAndEightKeepElementRowsAndGroupThem() throws {
        let harness = try Harness()
        let database = try TestDatabase()
        let connection = try database.connect()
        defer { connection.close() }
        try connection.executeScript("""
            CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """)
        for migration in Migrations.all where migration.version <= 6 {
            try connection.executeScript(migration.sql)
            _ = try connection.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [.int(Int64(migration.version)), .text(migration.name)])
        }
        let earlier = """
            ('earlier', 'ns', 'family_name', true, 'mayStore', 30, 'request', false, '2030-01-01T00:00:00Z'),
            ('earlier', 'ns', 'given_name', false, 'willNotStore', NULL, 'not-requested', false, NULL),
            ('earlier', 'ns', 'birth_date', false, 'willNotStore', NULL, 'not-requested', false, NULL),
            ('earlier', 'other', 'given_name', false, 'willNotStore', NULL, 'not-requested', false, NULL),
            ('later', 'ns', 'given_name', false, 'willNotStore', NULL, 'not-requested', false, NULL)
            """
        let columns = "event_id, namespace, element, requested, retention_intent, retention_days, retention_source, retention_capped, retain_until"
        try connection.executeScript("INSERT INTO elements (\(columns)) VALUES \(earlier)")
        let everyRow = "SELECT string_agg(row(\(columns))::text, ';' ORDER BY \(columns)) AS rows FROM elements"
        let before = try connection.execute(everyRow).string(0, "rows")
        #expect(try connection.execute("SELECT count(*) AS n FROM elements").int(0, "n") == 5)

        #expect(try Migrations.apply(on: connection) == Array(7...Migrations.all.count))
        #expect(try connection.execute(everyRow).string(0, "rows") == before)
        let groups = try connection.execute("SELECT event_id, namespace, elements::text AS names FROM element_groups ORDER BY 1, 2, 3")
        #expect((0..<groups.rowCount).map { "\(groups.string($0, "event_id")!) \(groups.string($0, "namespace")!) \(groups.string($0, "names")!)" } == [
            "earlier ns {birth_date,given_name}", "earlier ns {family_name}", "earlier other {given_name}", "later ns {given_name}",
        ])
        // Migration 12 keeps the table, renamed, with its index; the view reads it.
        let indexes = "SELECT string_agg(indexname, ',' ORDER BY indexname) AS names FROM pg_indexes WHERE tablename = 'element_groups_before_v12'"
        #expect(try connection.execute(indexes).string(0, "names") == "element_groups_before_v12_event_id")

        let event = try harness.event()
        #expect(try harness.store(connection).write([try harness.completion(event)], positions: [harness.partition: 1]).path == .pipelined)
        _ = try connection.execute("SET enable_seqscan = off")  // a table this small would be scanned whatever its indexes
        // Read by event: the results row by its key, the earlier rows by their index.
        let plan = try connection.execute("EXPLAIN (COSTS OFF) SELECT * FROM elements WHERE event_id = 'x'")
        let steps = (0..<plan.rowCount).compactMap { plan.string($0, "QUERY PLAN") }
        #expect(steps.contains { $0.contains("results_pkey") } && steps.contains { $0.contains("element_groups_before_v12_event_id") }, "\(steps)")
        let disclosed = try #require(harness.work.verifier.verify(eventJSON: event.json(), at: Date()).documents.first).elements.count
        #expect(try connection.execute("SELECT count(*) AS n FROM elements WHERE event_id = $1", [.text(event.id!)]).int(0, "n") == Int64(disclosed))
        #expect(try Self.repeatedElementRows(connection) == 0)
    }

    /// PostgreSQL text cannot hold U+0000. An id with one cannot be stored
    /// under that id, so it is dead-lettered; other text from the event is
    /// stored with U+FFFD in its place. Either way the rest of the batch goes in.
    @Test func textPostgreSQLCannotStoreNeverFailsABatch() throws {
        let harness = try Harness()
        var badID = try harness.event()
        badID.attributes["id"] = "evil\u{0}id"
        let ticket = try #require(harness.tracker.register(harness.partition, offset: harness.offset))
        let message = KafkaMessage(topicPartition: harness.partition, offset: harness.offset, key: nil, value: badID.json())
        harness.offset += 1
        guard case .deadLetter(let job) = harness.work.complete(Job(ticket: ticket, key: nil, receivedAt: Date(), content: .unread(message))),
              case .deadLetter(let letter) = job.content else {
            Issue.record("an id with U+0000 was not dead-lettered")
            return
        }
        #expect(letter.cause == RecordIntake.Cause.noID)

        var badTenant = try harness.event()
        badTenant.data["tenant"] = "no\u{0}such tenant"
        let good = try harness.event()
        let database = try TestDatabase()
        let connection = try database.connect()
        defer { connection.close() }
        _ = try Migrations.apply(on: connection)
        let written = try harness.store(connection).write([try harness.completion(badTenant), try harness.completion(good)],
                                                          positions: [harness.partition: 3])
        #expect(written.stored.count == 2)
        let results = try database.results()
        #expect(results[badTenant.id!]?.reasons == ["event.unknown_tenant"])
        #expect(results[good.id!]?.verdict == "verified")
        let tenant = try connection.execute("SELECT tenant FROM results WHERE event_id = $1", [.text(badTenant.id!)])
        #expect(tenant.string(0, "tenant") == "no\u{FFFD}such tenant")

        // RFC 3339 writes years PostgreSQL's timestamps do not have: such a date is stored as NULL,
        // and the result keeps its own reasons (not the persister's last-resort event.invalid).
        var ancient = try harness.event()
        ancient.attributes["time"] = "0000-06-01T00:00:00Z"
        let future = try harness.event()
        let more = try harness.store(connection).write([try harness.completion(ancient), try harness.completion(future)],
                                                       positions: [harness.partition: 5])
        #expect(more.stored.count == 2)
        #expect(try database.results()[ancient.id!]?.reasons == ["request.expired"])
        let time = try connection.execute("SELECT event_time IS NULL AS missing FROM results WHERE event_id = $1", [.text(ancient.id!)])
        #expect(time.bool(0, "missing") == true)
    }
}

/// The persister's last line against poison: a result PostgreSQL refuses for
/// what it holds (here fields no reader would let through, set on the result
/// directly) must not hold back its batch, nor be retried for ever. The rest
/// of the batch is stored as verified, the refused result as `event.invalid`
/// with only its id, and every offset passes.
extension ResultStoreTests {
    @Test func aResultPostgreSQLRefusesIsStoredWithOnlyItsIdAndHoldsBackNothing() throws {
        let harness = try Harness()
        let database = try TestDatabase()
        let setup = try database.connect()
        defer { setup.close() }
        _ = try Migrations.apply(on: setup)

        func random(_ count: Int) -> String { String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }) }
        let events = try (0..<7).map { _ in try harness.event() }
        var completions = try events.map { try harness.completion($0) }
        // Altered results have no prepared write, so the persister seals their
        // values itself: from the event verified again (the pool released its own).
        func altered(_ index: Int, _ change: (VerificationResult) -> VerificationResult) throws -> Completion {
            let completion = completions[index]
            return Completion(ticket: completion.ticket, key: completion.key, receivedAt: completion.receivedAt,
                              result: change(try harness.work.verified(events[index])))
        }
        // An unindexable tenant (9 KB of random text: PostgreSQL 54000 on the tenant index) …
        completions[1] = try altered(1) { result in
            VerificationResult(requestID: result.requestID, tenant: random(9000), flow: result.flow, verifiedAt: result.verifiedAt,
                               eventTime: result.eventTime, report: result.report, documents: result.documents,
                               requestedElements: result.requestedElements, replayToken: result.replayToken)
        }
        // … and a retention no timestamp holds (22008, caught by the client before sending).
        completions[4] = try altered(4) { result in
            VerificationResult(requestID: result.requestID, tenant: result.tenant, flow: result.flow, verifiedAt: result.verifiedAt,
                               eventTime: result.eventTime, report: result.report, documents: result.documents,
                               requestedElements: [RequestedElement(namespace: ResultStoreTests.ns, element: "given_name", retention: .mayStore(days: 3_000_000_000))],
                               replayToken: result.replayToken)
        }
        let poisoned = Set([events[1].id!, events[4].id!])

        let metrics = PipelineMetrics()
        let committed = NSLock()
        let connectionString = database.connectionString
        let retention = RetentionWriter(directory: harness.work.verifier.directory, keys: harness.keys)
        nonisolated(unsafe) var batches: [Int] = []
        let persister = Persister(
            capacity: 16, tracker: harness.tracker, batchSize: 16, linger: 0.2, log: Logger(minimum: .error),
            connect: { try PostgresConnection(connectionString: connectionString) }, makeStore: {
                ResultStore(connection: $0, groupID: "g", workerID: "w", nonceKey: Array(repeating: 7, count: 32), outboxClaim: 60, retention: retention)
            },
            onCommitted: { _, _, stored in committed.withLock { batches.append(stored) } }, metrics: metrics)
        persister.start()
        for completion in completions { persister.enqueue(completion) }
        #expect(persister.flush(timeout: 60), "the batch is written within a minute, not retried for ever")
        persister.stop(timeout: 5)

        let results = try database.results()
        #expect(results.count == events.count)
        for event in events {
            let expected = poisoned.contains(event.id!) ? ["event.invalid"] : []
            #expect(results[event.id!]?.reasons == expected, "\(event.id!): \(String(describing: results[event.id!]))")
        }
        for id in poisoned {
            let row = try setup.execute("SELECT tenant, doc_type FROM results WHERE event_id = $1", [.text(id)])
            #expect(row.string(0, "tenant") == nil && row.string(0, "doc_type") == nil, "only the id of a refused result is kept")
            #expect(try database.count("SELECT count(*) AS count FROM elements WHERE event_id = '\(id)'") == 0)
            #expect(try database.count("SELECT count(*) AS count FROM element_values WHERE event_id = '\(id)'") == 0)
            let outcome = try setup.execute("SELECT payload FROM outbox WHERE event_id = $1", [.text(id)])
            #expect(outcome.string(0, "payload")?.contains("event.invalid") == true, "the refused result still gets its outcome")
        }
        #expect(try database.count("SELECT count(*) AS count FROM element_values") == events.count - poisoned.count)
        #expect(try database.count("SELECT next_offset AS count FROM consumer_positions") == events.count, "every offset passes")
        #expect(committed.withLock { batches.reduce(0, +) } == events.count)
        let exposition = metrics.registry.exposition()
        #expect(exposition.contains("veridoc_results_unstorable_total{sqlstate=\"54000\"} 1"), "\(exposition)")
        #expect(exposition.contains("veridoc_results_unstorable_total{sqlstate=\"22008\"} 1"), "\(exposition)")
    }
}
