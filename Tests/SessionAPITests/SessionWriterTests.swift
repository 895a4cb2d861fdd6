import Foundation
import Postgres
import Synchronization
import Storage
import Testing
import TestSupport
@testable import SessionAPI

/// The session writer against the test PostgreSQL: creations from many
/// threads at once all land, each answered once its row is committed; with
/// the database gone a creation is 503 in time, never a hang.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct SessionWriterTests {
    func row(_ index: Int) -> SessionsTable.Row {
        // Whole seconds, as serve's sessions have them (their nonce's times).
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        return SessionsTable.Row(tenant: "t\(index % 3)", id: UUID(), flow: "iso-device-response", audience: "", docType: "org.iso.18013.5.1.mDL",
                          requested: "[]", nonce: [UInt8(index & 0xff)], encryptionInfo: nil, reference: nil, createdAt: now,
                          expiresAt: now.addingTimeInterval(60))
    }

    @Test func concurrentCreationsAllLandAndEachIsAnsweredAfterItsCommit() throws {
        let database = try TestDatabase()
        let setup = try database.connect()
        try Migrations.apply(on: setup)
        setup.close()
        let connectionString = database.connectionString
        let writer = SessionWriter { try PostgresConnection(connectionString: connectionString) }
        defer { writer.stop() }
        let rows = (0..<300).map(row)
        let failures = Mutex(0)
        let lookup = try database.connect()
        DispatchQueue.concurrentPerform(iterations: rows.count) { index in
            do {
                try writer.insert(rows[index])
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try database.count("SELECT count(*) AS count FROM sessions") == rows.count)
        // Answered means committed: a row read right after its insert returns is there.
        let one = row(7)
        try writer.insert(one)
        #expect(SessionsTable.stored(try lookup.execute(SessionsTable.find(tenant: one.tenant, id: one.id)))?.row == one)
        lookup.close()
    }

    /// Unavailable after the writer's timeout, never a hang.
    @Test func withoutTheDatabaseACreationIsUnavailableInTime() throws {
        let writer = SessionWriter(timeout: 3) { try PostgresConnection(connectionString: "host=127.0.0.1 port=1 connect_timeout=1") }
        defer { writer.stop() }
        #expect(throws: SessionError.unavailable(.database)) { try writer.insert(row(1)) }
    }
}
