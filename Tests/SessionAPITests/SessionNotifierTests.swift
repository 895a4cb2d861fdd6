import Foundation
import Postgres
@testable import SessionAPI
import Storage
import Testing
import TestSupport

/// Long polls wait for their session's notification, not on a timer: the
/// listener wakes the waiters of the session a NOTIFY names, and only them;
/// a state change of the sessions table notifies at its commit.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct SessionNotifierTests {
    @Test func aNotificationWakesTheSessionsWaitersOnly() throws {
        let database = try TestDatabase()
        let connectionString = database.connectionString
        let notifier = SessionNotifier { try PostgresConnection(connectionString: connectionString) }
        defer { notifier.stop() }
        #expect(eventually(20) { notifier.isListening }, "the listener never listened")
        let session = UUID(), other = UUID()
        let woken = DispatchSemaphore(value: 0), bystanderWoken = DispatchSemaphore(value: 0)
        let waiter = notifier.register(session) { woken.signal() }
        let bystander = notifier.register(other) { bystanderWoken.signal() }
        defer {
            notifier.unregister(waiter)
            notifier.unregister(bystander)
        }
        #expect(notifier.waiting == 2)
        let connection = try database.connect()
        _ = try connection.execute("SELECT pg_notify($1, $2)", [.text(SessionsTable.changesChannel), .text(session.uuidString.lowercased())])
        #expect(woken.wait(timeout: .now() + 20) == .success, "the session's waiter was not woken")
        #expect(bystanderWoken.wait(timeout: .now() + 0.5) == .timedOut, "another session's waiter was woken")

        // A session's change notifies at commit: the state the long poll waits for.
        try Migrations.apply(on: connection)
        let row = SessionsTable.Row(tenant: "t1", id: session, flow: "apple-wallet-app", audience: "m", docType: "d", requested: "[]", nonce: [1],
                                    encryptionInfo: nil, reference: nil, createdAt: Date(), expiresAt: Date() + 600)
        _ = try connection.execute(try SessionsTable.insert([row]))
        let taken = DispatchSemaphore(value: 0)
        let taking = notifier.register(session) { taken.signal() }
        defer { notifier.unregister(taking) }
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t1", id: session, digest: [7], at: Date())).rowCount == 1)
        #expect(taken.wait(timeout: .now() + 20) == .success, "taking the response did not notify")
    }
}
