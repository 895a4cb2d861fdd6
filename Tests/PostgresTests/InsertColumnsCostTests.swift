import Foundation
import Postgres
import Testing

/// What `insertColumns` costs the server, for comparing encodings: 200,000 rows
/// shaped like the worker's `elements` and `element_values` rows, in batches of
/// 500, best of several rounds. Prints the backend's CPU time (from
/// /proc/<pid>/stat, so the server must run on this machine) and the wall time;
/// asserts nothing about them, as this is a shared, noisy machine.
///
/// Each round runs both encodings back to back, so a noisy neighbour hits both
/// alike: binary arrays (the types as the tables spell them) and text array
/// literals (the same types schema-qualified, which `insertColumns` does not
/// recognise and so sends as literals, as it sent every column before).
///
///     VERIDOC_MEASURE_INSERT_COLUMNS=1 scripts/with-test-services \
///         swift test --filter InsertColumnsCostTests
@Suite(.enabled(if: TestServer.isConfigured && ProcessInfo.processInfo.environment["VERIDOC_MEASURE_INSERT_COLUMNS"] != nil,
                "set VERIDOC_MEASURE_INSERT_COLUMNS=1 (and VERIDOC_TEST_POSTGRES) to measure"))
struct InsertColumnsCostTests {
    static let rowCount = 200_000
    static let batch = 500
    static let rounds = 5

    static let elementColumns: [PostgresColumn] = [
        .init("event_id", "text"), .init("namespace", "text"), .init("element", "text"), .init("requested", "boolean"),
        .init("retention_intent", "text"), .init("retention_days", "integer"), .init("retention_source", "text"),
        .init("retention_capped", "boolean"), .init("retain_until", "timestamptz"),
    ]
    static let valueColumns: [PostgresColumn] = [
        .init("event_id", "text"), .init("tenant", "text"), .init("namespace", "text"), .init("element", "text"), .init("key_id", "text"),
        .init("nonce", "bytea"), .init("ciphertext", "bytea"), .init("retain_until", "timestamptz"), .init("stored_at", "timestamptz"),
    ]
    static let names = ["family_name", "given_name", "birth_date", "issue_date", "expiry_date", "issuing_country", "issuing_authority",
                        "document_number", "portrait", "driving_privileges", "un_distinguishing_sign", "age_over_18", "age_over_21",
                        "sex", "height", "weight", "eye_colour", "hair_colour", "birth_place", "resident_address", "nationality",
                        "age_in_years", "age_birth_year"]

    /// `columns` with schema-qualified types: same tables, text literal path.
    static func literal(_ columns: [PostgresColumn]) -> [PostgresColumn] {
        columns.map { column in
            let name = ["text": "text", "boolean": "bool", "integer": "int4", "bytea": "bytea", "timestamptz": "timestamptz"][column.type]!
            return PostgresColumn(column.name, "pg_catalog." + name)
        }
    }

    static func elementRow(_ index: Int, now: Date) -> [PostgresValue] {
        let event = "req-\(index / names.count)-8f14e45fceea167a5a36dedd4bea2543"
        let limited = index % 2 == 0
        return [.text(event), .text("org.iso.18013.5.1"), .text(names[index % names.count]), .bool(index % 3 != 0),
                .text(limited ? "mayStore" : "willNotStore"), limited ? .int(30) : .null, .text("tenantPolicy"), .bool(false),
                limited ? .timestamp(now.addingTimeInterval(30 * 86_400 + Double(index) * 0.000_123)) : .text("infinity")]
    }

    static func valueRow(_ index: Int, now: Date) -> [PostgresValue] {
        let event = "req-\(index / names.count)-8f14e45fceea167a5a36dedd4bea2543"
        let ciphertext = (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        return [.text(event), .text("tenant-a"), .text("org.iso.18013.5.1"), .text(names[index % names.count]), .text("k2026-11"),
                .bytes((0..<12).map { UInt8(truncatingIfNeeded: $0 &+ index) }), .bytes(ciphertext),
                .timestamp(now.addingTimeInterval(30 * 86_400 + Double(index % 1000))), .timestamp(now)]
    }

    @Test func serverCostOfTypicalBatches() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE \(schema).elements (
                    event_id text NOT NULL, namespace text NOT NULL, element text NOT NULL, requested boolean NOT NULL,
                    retention_intent text NOT NULL, retention_days integer, retention_source text NOT NULL,
                    retention_capped boolean NOT NULL, retain_until timestamptz,
                    PRIMARY KEY (event_id, namespace, element));
                CREATE TABLE \(schema).element_values (
                    event_id text NOT NULL, tenant text NOT NULL, namespace text NOT NULL, element text NOT NULL,
                    key_id text NOT NULL, nonce bytea NOT NULL, ciphertext bytea NOT NULL,
                    retain_until timestamptz NOT NULL, stored_at timestamptz NOT NULL,
                    PRIMARY KEY (event_id, namespace, element, retain_until));
                CREATE INDEX ON \(schema).element_values (retain_until);
                CREATE INDEX ON \(schema).element_values (tenant);
                """)
            let backend = try #require(connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
            let now = Date()
            let tables: [(name: String, columns: [PostgresColumn], row: (Int, Date) -> [PostgresValue])] = [
                ("elements", Self.elementColumns, Self.elementRow), ("element_values", Self.valueColumns, Self.valueRow),
            ]
            for table in tables {
                let batches = stride(from: 0, to: Self.rowCount, by: Self.batch).map { start in
                    (start..<min(start + Self.batch, Self.rowCount)).map { table.row($0, now) }
                }
                let encodings = [("text literals", Self.literal(table.columns)), ("binary", table.columns)]
                var best = Array(repeating: (server: Double.infinity, client: Double.infinity, wall: Double.infinity), count: encodings.count)
                for round in 1...Self.rounds {
                    for (index, (encoding, columns)) in encodings.enumerated() {
                        try connection.executeScript("TRUNCATE \(schema).\(table.name); CHECKPOINT")
                        let server = try Self.cpuSeconds(ofProcess: Int32(backend))
                        let client = Self.ownCPUSeconds()
                        let start = DispatchTime.now().uptimeNanoseconds
                        for rows in batches {
                            try connection.insertColumns(into: "\(schema).\(table.name)", columns: columns, rows: rows)
                        }
                        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                        let serverUsed = try Self.cpuSeconds(ofProcess: Int32(backend)) - server
                        let clientUsed = Self.ownCPUSeconds() - client
                        print("insertColumns \(table.name) \(encoding) round \(round): server CPU \(Self.format(serverUsed)) s, "
                              + "client CPU \(Self.format(clientUsed)) s, wall \(Self.format(wall)) s")
                        best[index] = (min(best[index].server, serverUsed), min(best[index].client, clientUsed), min(best[index].wall, wall))
                        let count = try connection.execute("SELECT count(*) AS n FROM \(schema).\(table.name)").int(0, "n")
                        #expect(count == Int64(Self.rowCount))
                    }
                }
                for (index, (encoding, _)) in encodings.enumerated() {
                    print("insertColumns \(table.name) \(encoding) best of \(Self.rounds) (\(Self.rowCount) rows, batches of \(Self.batch)): "
                          + "server CPU \(Self.format(best[index].server)) s, client CPU \(Self.format(best[index].client)) s, "
                          + "wall \(Self.format(best[index].wall)) s")
                }
                print("insertColumns \(table.name) binary / text literals: server CPU \(Self.format(best[1].server / best[0].server)), "
                      + "wall \(Self.format(best[1].wall / best[0].wall))")
            }
        }
    }

    static func format(_ seconds: Double) -> String { String(format: "%.3f", seconds) }

    /// utime + stime of `pid` (fields 14 and 15 of /proc/<pid>/stat, after the parenthesised name).
    static func cpuSeconds(ofProcess pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        guard let close = stat.lastIndex(of: ")") else { throw MeasureFailure() }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { throw MeasureFailure() }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    struct MeasureFailure: Error {}
}
