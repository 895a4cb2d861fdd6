import Foundation
import Postgres
import Testing

/// The PostgreSQL server that `make test` starts (VERIDOC_TEST_POSTGRES); the
/// pipeline tests add a broker process per test and worker processes.
public enum Services {
    public static let postgres = ProcessInfo.processInfo.environment["VERIDOC_TEST_POSTGRES"]
    public static var available: Bool { postgres != nil }
    public static let skipMessage: Comment = "VERIDOC_TEST_POSTGRES is not set: run through `make test` (scripts/with-test-services), which starts PostgreSQL"
}

/// A fresh database on the test server, dropped afterwards.
public final class TestDatabase {
    public let name: String
    public let connectionString: String
    private let admin: String

    public init(server: String? = nil) throws {
        guard let admin = server ?? Services.postgres else { throw TestFailure("no test PostgreSQL") }
        self.admin = admin
        name = "veridoc_test_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try PostgresConnection(connectionString: admin)
        defer { connection.close() }
        _ = try connection.execute("CREATE DATABASE \(name)")
        connectionString = admin + " dbname=\(name)"
    }

    public func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: connectionString, applicationName: "veridoc-test")
    }

    /// A `count` query's value; 0 while the worker has not created the tables yet.
    public func count(_ sql: String) throws -> Int {
        let connection = try connect()
        defer { connection.close() }
        do {
            return Int(try connection.execute(sql).int(0, "count") ?? -1)
        } catch {
            if error.sqlState == "42P01" { return 0 }
            throw error
        }
    }

    /// event_id → (verdict, reason codes), from the results table.
    public func results() throws -> [String: (verdict: String, reasons: [String])] {
        let connection = try connect()
        defer { connection.close() }
        let rows = try connection.execute("SELECT event_id, verdict, array_to_string(reason_codes, ',') AS reasons FROM results")
        var results: [String: (String, [String])] = [:]
        for row in 0..<rows.rowCount {
            let reasons = rows.string(row, "reasons") ?? ""
            results[rows.string(row, "event_id")!] = (rows.string(row, "verdict")!, reasons.isEmpty ? [] : reasons.split(separator: ",").map(String.init))
        }
        return results
    }

    deinit {
        if let connection = try? PostgresConnection(connectionString: admin) {
            _ = try? connection.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
            _ = try? connection.execute("DROP DATABASE IF EXISTS \(name)")
            connection.close()
        }
    }
}
