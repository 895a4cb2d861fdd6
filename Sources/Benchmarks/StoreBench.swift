import DemoKit
import Foundation
import Kafka
import Observability
import Pipeline
import Postgres
import Retention
import Storage
import TestIssuer
import Verification

/// Section 6 of `make bench`: what the persister's statements cost the
/// database server, measured as the backend's scheduler time (so the server
/// must run on this machine, as `EmbeddedPostgres` does).
///
/// - Batches through the real `ResultStore.write` (nonces, results with their
///   element groups, values, outbox and positions in one pipelined transaction), on a
///   connection with prepared statements and one without, and a batch that
///   holds a replay against an all-new one: replays and redeliveries are
///   ordinary traffic, so they must not make a batch dearer than the
///   statement that decides them. The tables hold filler rows first, so
///   lookups by id go through indexes as in service.
/// - `insertColumns` with binary arrays against text array literals, for the
///   shapes the worker writes most.
///
/// Cases take turns in an order that rotates each round, so a noisy
/// neighbour hits all of them alike; the first round is a warm-up (catalog
/// caches, value partitions, the server's choice of a generic plan).
public struct StoreBench {
    public struct Options: Sendable {
        public var batches: Int
        public var eventsPerBatch = 15
        public var rounds: Int
        public var fillerResults: Int
        public var insertRows: Int
        public var insertBatch = 500
        public var insertRounds: Int

        public static let full = Options(batches: 120, rounds: 6, fillerResults: 200_000, insertRows: 200_000, insertRounds: 5)
        public static let quick = Options(batches: 12, rounds: 1, fillerResults: 5_000, insertRows: 10_000, insertRounds: 1)
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    let postgres: EmbeddedPostgres
    let options: Options
    let progress: @Sendable (String) -> Void

    public init(postgres: EmbeddedPostgres, options: Options, progress: @escaping @Sendable (String) -> Void) {
        self.postgres = postgres
        self.options = options
        self.progress = progress
    }

    public func run() throws -> BenchReport.Store {
        let admin = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-bench")
        defer { admin.close() }
        _ = try Migrations.apply(on: admin)
        let batches = try batchCases(admin: admin)
        let encodings = try encodingCases(admin: admin)
        return BenchReport.Store(batches: options.batches, eventsPerBatch: options.eventsPerBatch, rounds: options.rounds,
                                 fillerResults: options.fillerResults, cases: batches, insertRows: options.insertRows,
                                 insertBatch: options.insertBatch, insertRounds: options.insertRounds, encodings: encodings)
    }

    // MARK: Persister batches

    private func batchCases(admin: PostgresConnection) throws -> [BenchReport.StoreCase] {
        progress("storage: generating \(options.batches * options.eventsPerBatch) events …")
        let source = try CompletionSource()
        var clean: [[Completion]] = []
        var withReplay: [[Completion]] = []
        for _ in 0..<options.batches {
            let events = try (0..<options.eventsPerBatch).map { _ in try source.event() }
            clean.append(try events.map(source.completion))
            // The same batch with its last event swapped for a replay of its first.
            var replay = events[0]
            replay.attributes["id"] = "replay-of-\(events[0].id ?? "")"
            withReplay.append(try (Array(events.dropLast()) + [replay]).map(source.completion))
        }

        progress("storage: filling the tables with \(options.fillerResults) results …")
        let filler = options.fillerResults
        try admin.executeScript("""
            INSERT INTO results (event_id, verdict, reason_codes, received_at, verified_at, processing_seconds, source_topic, source_partition, source_offset,
                                 element_groups)
              SELECT 'filler-' || md5(i::text), 'verified', '{}', now(), now(), 0, 't', 0, i,
                     (SELECT json_agg(json_build_object('capped', false, 'elements', ARRAY['e' || g, 'f' || g], 'intent', 'willNotStore',
                                                        'namespace', 'ns', 'requested', g = 0, 'source', 'request'))
                      FROM generate_series(0, 3) g)
              FROM generate_series(1, \(filler)) i;
            INSERT INTO nonces (tenant, nonce_hash, event_id, used_at)
              SELECT 'tenant', sha256(i::text::bytea), 'filler-' || md5(i::text), now() FROM generate_series(1, \(filler)) i
            """)
        for table in ["results", "nonces"] { try admin.executeScript("VACUUM ANALYZE \(table)") }

        struct Writer {
            let connection: PostgresConnection
            let pid: Int32
            let store: ResultStore
        }
        let writers = try [false, true].map { prepared in
            let connection = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-bench", preparedStatements: prepared)
            guard let pid = try connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid") else { throw Failure(description: "no backend pid") }
            return Writer(connection: connection, pid: Int32(pid), store: source.store(connection))
        }
        defer { writers.forEach { $0.connection.close() } }

        let cases: [(name: String, prepared: Bool, batches: [[Completion]], replays: Int)] = [
            ("all new, unnamed statements", false, clean, 0),
            ("all new, prepared statements", true, clean, 0),
            ("one replay a batch, prepared statements", true, withReplay, 1),
        ]
        var runs = Array(repeating: [(server: Double, wall: Double)](), count: cases.count)
        for round in 0...options.rounds {
            progress("storage: persister batches, round \(round) of \(options.rounds)\(round == 0 ? " (warm-up)" : "") …")
            for turn in cases.indices {
                let index = (turn + round) % cases.count
                let kind = cases[index]
                let writer = writers[kind.prepared ? 1 : 0]
                try admin.executeScript("""
                    DELETE FROM results WHERE event_id NOT LIKE 'filler-%'; DELETE FROM nonces WHERE event_id NOT LIKE 'filler-%';
                    TRUNCATE outbox, consumer_positions, consumer_gaps, element_values
                    """)
                for table in ["results", "nonces"] { try admin.executeScript("VACUUM \(table)") }
                try admin.executeScript("CHECKPOINT")
                let server = ProcessCPU.scheduledSeconds(pid: writer.pid)
                let start = DispatchTime.now().uptimeNanoseconds
                for (number, batch) in kind.batches.enumerated() {
                    let written = try writer.store.write(batch, positions: [source.partition: Int64((number + 1) * options.eventsPerBatch)])
                    // What the figures are about: every batch on the pipelined path, each replay stored refused (its nonce was used).
                    let refused = written.stored.filter { !$0.isVerified }.count
                    guard written.path == .pipelined, written.stored.count == batch.count, refused == kind.replays else {
                        throw Failure(description: "storage bench: \(kind.name) batch \(number) went \(written.path), stored \(written.stored.count) of \(batch.count) results, \(refused) refused")
                    }
                }
                let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                let used = ProcessCPU.scheduledSeconds(pid: writer.pid) - server
                if round > 0 { runs[index].append((used, wall)) }
            }
        }
        let perBatch = 1000 / Double(options.batches)
        return cases.enumerated().map { index, kind in
            BenchReport.StoreCase(name: kind.name, preparedStatements: kind.prepared, replaysPerBatch: kind.replays,
                                  serverMillisecondsPerBatch: Self.median(runs[index].map(\.server)) * perBatch,
                                  wallMillisecondsPerBatch: Self.median(runs[index].map(\.wall)) * perBatch)
        }
    }

    // MARK: insertColumns encodings

    /// Per-element rows of scalar columns (the worker's element rows before
    /// they were grouped) and `element_values` as the table declares it.
    static let elementColumns: [PostgresColumn] = [
        .init("event_id", "text"), .init("namespace", "text"), .init("element", "text"), .init("requested", "boolean"),
        .init("retention_intent", "text"), .init("retention_days", "integer"), .init("retention_source", "text"),
        .init("retention_capped", "boolean"), .init("retain_until", "timestamptz"),
    ]
    static let elementNames = ["family_name", "given_name", "birth_date", "issue_date", "expiry_date", "issuing_country", "issuing_authority",
                               "document_number", "portrait", "driving_privileges", "un_distinguishing_sign", "age_over_18", "age_over_21",
                               "sex", "height", "weight", "eye_colour", "hair_colour", "birth_place", "resident_address", "nationality",
                               "age_in_years", "age_birth_year"]

    static func elementRow(_ index: Int, now: Date) -> [PostgresValue] {
        let event = "req-\(index / elementNames.count)-8f14e45fceea167a5a36dedd4bea2543"
        let limited = index % 2 == 0
        return [.text(event), .text("org.iso.18013.5.1"), .text(elementNames[index % elementNames.count]), .bool(index % 3 != 0),
                .text(limited ? "mayStore" : "willNotStore"), limited ? .int(30) : .null, .text("tenantPolicy"), .bool(false),
                limited ? .timestamp(now.addingTimeInterval(30 * 86_400 + Double(index) * 0.000_123)) : .text("infinity")]
    }

    static func valueRow(_ index: Int, now: Date) -> [PostgresValue] {
        let event = "req-\(index / elementNames.count)-8f14e45fceea167a5a36dedd4bea2543"
        return ElementValuesTable.parameters(ElementValuesTable.Row(
            eventID: event, tenant: "tenant-a", namespace: "org.iso.18013.5.1", element: elementNames[index % elementNames.count], keyID: "k2026-11",
            nonce: (0..<12).map { UInt8(truncatingIfNeeded: $0 &+ index) }, ciphertext: (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) },
            retainUntil: .at(now.addingTimeInterval(30 * 86_400 + Double(index % 1000))), storedAt: now))
    }

    /// `columns` with schema-qualified types: the same table, but types
    /// `insertColumns` does not recognise, so it sends text array literals.
    static func literal(_ columns: [PostgresColumn]) throws -> [PostgresColumn] {
        let catalog = ["text": "text", "boolean": "bool", "integer": "int4", "bytea": "bytea", "timestamptz": "timestamptz"]
        return try columns.map { column in
            guard let name = catalog[column.type] else { throw Failure(description: "storage bench: no literal spelling for \(column.type)") }
            return PostgresColumn(column.name, "pg_catalog." + name)
        }
    }

    private func encodingCases(admin: PostgresConnection) throws -> [BenchReport.StoreEncoding] {
        try admin.executeScript("""
            DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench;
            CREATE TABLE bench.elements (
                event_id text NOT NULL, namespace text NOT NULL, element text NOT NULL, requested boolean NOT NULL,
                retention_intent text NOT NULL, retention_days integer, retention_source text NOT NULL,
                retention_capped boolean NOT NULL, retain_until timestamptz,
                PRIMARY KEY (event_id, namespace, element));
            CREATE TABLE bench.element_values (LIKE element_values INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
            ALTER TABLE bench.element_values ADD PRIMARY KEY (event_id, namespace, element, retain_until);
            CREATE INDEX ON bench.element_values (retain_until);
            CREATE INDEX ON bench.element_values (tenant);
            """)
        defer { try? admin.executeScript("DROP SCHEMA IF EXISTS bench CASCADE") }
        let connection = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-bench")
        defer { connection.close() }
        guard let pid = try connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid") else { throw Failure(description: "no backend pid") }
        let now = Date()
        let tables: [(name: String, columns: [PostgresColumn], row: (Int, Date) -> [PostgresValue])] = [
            ("elements", Self.elementColumns, Self.elementRow), ("element_values", ElementValuesTable.columns, Self.valueRow),
        ]
        var measured: [BenchReport.StoreEncoding] = []
        for table in tables {
            let batches = stride(from: 0, to: options.insertRows, by: options.insertBatch).map { start in
                (start..<min(start + options.insertBatch, options.insertRows)).map { table.row($0, now) }
            }
            let encodings = [("text literals", try Self.literal(table.columns)), ("binary", table.columns)]
            var best = Array(repeating: (server: Double.infinity, client: Double.infinity, wall: Double.infinity), count: encodings.count)
            for round in 1...options.insertRounds {
                progress("storage: insertColumns \(table.name), round \(round) of \(options.insertRounds) …")
                for turn in encodings.indices {
                    let index = (turn + round) % encodings.count
                    try connection.executeScript("TRUNCATE bench.\(table.name); CHECKPOINT")
                    let server = ProcessCPU.scheduledSeconds(pid: Int32(pid))
                    let client = ProcessCPU.ownSeconds()
                    let start = DispatchTime.now().uptimeNanoseconds
                    for rows in batches {
                        try connection.insertColumns(into: "bench.\(table.name)", columns: encodings[index].1, rows: rows)
                    }
                    let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    let serverUsed = ProcessCPU.scheduledSeconds(pid: Int32(pid)) - server
                    let clientUsed = ProcessCPU.ownSeconds() - client
                    guard try connection.execute("SELECT count(*) AS n FROM bench.\(table.name)").int(0, "n") == Int64(options.insertRows) else {
                        throw Failure(description: "storage bench: bench.\(table.name) does not hold the \(options.insertRows) rows written")
                    }
                    best[index] = (min(best[index].server, serverUsed), min(best[index].client, clientUsed), min(best[index].wall, wall))
                }
            }
            for (index, (encoding, _)) in encodings.enumerated() {
                measured.append(BenchReport.StoreEncoding(table: table.name, encoding: encoding, serverSeconds: best[index].server,
                                                          clientSeconds: best[index].client, wallSeconds: best[index].wall))
            }
        }
        return measured
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// Valid events from the test issuer, turned into what the verification pool
/// hands the persister: each asks to keep one element's value for five days,
/// so a batch writes every table.
private final class CompletionSource {
    var factory: TestIssuer.EventFactory
    let work: JobWork
    let keys: DataKeyRing
    let directory: TenantDirectory
    let tracker = PartitionTracker()
    let partition = TopicPartition("veridoc.requests", 0)
    var offset: Int64 = 0

    init() throws {
        factory = try TestIssuer.EventFactory(now: Date(), seed: 2028)
        let verifier = try factory.verifier()
        directory = verifier.directory
        keys = try DataKeyRing(keys: ["k1": Array(repeating: 0x5a, count: 32)], activeID: "k1")
        work = JobWork(verifier: verifier, intake: RecordIntake(parser: verifier.eventParser),
                       retention: RetentionWriter(directory: verifier.directory, keys: keys), metrics: PipelineMetrics(), log: Logger(minimum: .error))
        tracker.assign(partition, startingAt: 0)
    }

    func event() throws -> TestIssuer.GeneratedEvent {
        var options = TestIssuer.EventOptions()
        options.requestedElements = [RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "given_name", retention: .mayStore(days: 5))]
        return try factory.event(.appleWalletApp, options: options)
    }

    func completion(_ event: TestIssuer.GeneratedEvent) throws -> Completion {
        guard let ticket = tracker.register(partition, offset: offset) else { throw StoreBench.Failure(description: "storage bench: no ticket") }
        let message = KafkaMessage(topicPartition: partition, offset: offset, key: Array("k".utf8), value: event.json())
        offset += 1
        guard case .completion(let completion) = work.complete(Job(ticket: ticket, key: message.key, receivedAt: Date(), content: .unread(message))),
              completion.result?.isVerified == true else {
            throw StoreBench.Failure(description: "storage bench: a generated event did not verify")
        }
        return completion
    }

    func store(_ connection: PostgresConnection) -> ResultStore {
        ResultStore(connection: connection, groupID: "bench", workerID: "bench", nonceKey: Array(repeating: 7, count: 32), outboxClaim: 60,
                    retention: RetentionWriter(directory: directory, keys: keys))
    }
}
