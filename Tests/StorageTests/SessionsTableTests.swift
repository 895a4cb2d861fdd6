import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// `SessionsTable` against a migrated database: a session is found only by
/// its own tenant, takes one response (the same again is recognised, another
/// is not taken, none after expiry), is completed once, and goes some time
/// after it expired.
@Suite(.enabled(if: Services.available, Services.skipMessage), .serialized)
struct SessionsTableTests: MigratedDatabaseSuite {
    let migrated: MigratedDatabase

    func row(tenant: String = "t1", expiresIn: TimeInterval = 60) -> SessionsTable.Row {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        return SessionsTable.Row(tenant: tenant, id: UUID(), flow: "apple-wallet-web", audience: "https://shop.example.com", docType: "org.iso.18013.5.1.mDL",
                                 requested: "[]", nonce: [1, 2, 3], encryptionInfo: "info", reference: "order-1", createdAt: now,
                                 expiresAt: now.addingTimeInterval(expiresIn))
    }

    func find(_ row: SessionsTable.Row, tenant: String? = nil) throws -> SessionsTable.Stored? {
        SessionsTable.stored(try connection.execute(SessionsTable.find(tenant: tenant ?? row.tenant, id: row.id)))
    }

    @Test func aSessionIsItsTenantsAlone() throws {
        let session = row()
        try connection.execute(try SessionsTable.insert([session]))
        let stored = try #require(try find(session))
        #expect(stored.row == session, "every column comes back as written")
        #expect(stored.status == .pending)
        #expect(stored.responseDigest == nil && stored.outcome == nil)
        #expect(try find(session, tenant: "t2") == nil)
    }

    @Test func theFirstResponseIsTakenAndNoneAfterExpiry() throws {
        let session = row()
        try connection.execute(try SessionsTable.insert([session]))
        let now = Date()
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t1", id: session.id, digest: [9], at: now)).rowCount == 1)
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t1", id: session.id, digest: [9], at: now)).rowCount == 0)
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t1", id: session.id, digest: [8], at: now)).rowCount == 0)
        let taken = try #require(try find(session))
        #expect(taken.responseDigest == [9] && taken.status == .processing, "the first digest stays")
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t2", id: session.id, digest: [9], at: now)).rowCount == 0)

        let expired = row(expiresIn: 1)
        try connection.execute(try SessionsTable.insert([expired]))
        #expect(try connection.execute(SessionsTable.takeResponse(tenant: "t1", id: expired.id, digest: [9], at: now.addingTimeInterval(5))).rowCount == 0)
        #expect(try find(expired)?.responseDigest == nil)
    }

    @Test func erasureStripsTheSealedClaimsOfAnOutcome() throws {
        let (first, second, third) = (row(), row(), row(tenant: "t2"))
        for each in [first, second, third] { try connection.execute(try SessionsTable.insert([each])) }
        func outcome(_ request: String) -> String { #"{"id":"o","data":{"requestId":"\#(request)","verdict":"verified","claims":{"enc":"AA=="}}}"# }
        // A session's request event has the session's id.
        func id(_ row: SessionsTable.Row) -> String { row.id.uuidString.lowercased() }
        try connection.execute(SessionsTable.complete([.init(tenant: "t1", id: first.id, status: .verified, outcome: outcome(id(first))),
                                                       .init(tenant: "t1", id: second.id, status: .verified, outcome: outcome(id(second))),
                                                       .init(tenant: "t2", id: third.id, status: .verified, outcome: outcome(id(third)))]))
        #expect(try connection.execute(SessionsTable.stripClaims(matching: .request(eventID: id(first)), limit: 10)).affectedRows == 1)
        #expect(try find(first)?.outcome?.contains("claims") == false)
        #expect(try find(first)?.outcome?.contains("verified") == true, "the rest of the outcome stays")
        #expect(try find(second)?.outcome?.contains("claims") == true)
        #expect(try connection.execute(SessionsTable.stripClaims(matching: .tenant("t1"), limit: 10)).affectedRows == 1, "only outcomes that still have claims")
        #expect(try find(third)?.outcome?.contains("claims") == true, "another tenant's stay")
    }

    /// jsonb refuses the escape \u0000, which an outcome or a request event
    /// carries where hostile input put a NUL in a string: erasure reads them
    /// anyway, and removes a response still waiting for the broker.
    @Test func erasureReadsNULEscapesAndRemovesWaitingResponses() throws {
        let (first, second) = (row(), row())
        for each in [first, second] { try connection.execute(try SessionsTable.insert([each])) }
        let outcome = #"{"id":"o\u0000","data":{"requestId":"r1","verdict":"rejected","docType":"x\u0000y","claims":{"enc":"AA=="}}}"#
        try connection.execute(SessionsTable.complete([.init(tenant: "t1", id: first.id, status: .rejected, outcome: outcome)]))
        #expect(try connection.execute(SessionsTable.stripClaims(matching: .tenant("t1"), limit: 10)).affectedRows == 1)
        let stripped = try #require(try find(first)?.outcome)
        #expect(!stripped.contains("claims") && stripped.contains("rejected"), "\(stripped)")

        // A request event made from a session has the session's id.
        let event = Array(#"{"id":"\#(second.id.uuidString.lowercased())","data":{"tenant":"t1","note":"a\u0000b"}}"#.utf8)
        try connection.execute(SubmissionsTable.insert(.init(tenant: "t1", sessionID: second.id, key: [1], event: event), claimedForSeconds: 60))
        #expect(try connection.execute(SubmissionsTable.delete(matching: .request(eventID: first.id.uuidString.lowercased()), limit: 10)).affectedRows == 0)
        #expect(try connection.execute(SubmissionsTable.delete(matching: .request(eventID: second.id.uuidString.lowercased()), limit: 10)).affectedRows == 1)
        try connection.execute(SubmissionsTable.insert(.init(tenant: "t1", sessionID: second.id, key: [1], event: event), claimedForSeconds: 60))
        #expect(try connection.execute(SubmissionsTable.delete(matching: .tenant("t2"), limit: 10)).affectedRows == 0)
        #expect(try connection.execute(SubmissionsTable.delete(matching: .tenant("t1"), limit: 10)).affectedRows == 1)
    }

    @Test func aSessionIsCompletedOnceAndPurgedAfterItExpired() throws {
        let session = row()
        let other = row(tenant: "t2")
        for each in [session, other] { try connection.execute(try SessionsTable.insert([each])) }
        try connection.execute(SessionsTable.complete([.init(tenant: "t1", id: session.id, status: .verified, outcome: #"{"data":{"verdict":"verified"}}"#),
                                                       .init(tenant: "t1", id: other.id, status: .verified, outcome: "{}")]))
        let done = try #require(try find(session))
        #expect(done.status == .verified && done.outcome == #"{"data":{"verdict":"verified"}}"#)
        #expect(try find(other)?.status == .pending, "a completion names its tenant")
        try connection.execute(SessionsTable.complete([.init(tenant: "t1", id: session.id, status: .rejected, outcome: "{}")]))
        #expect(try find(session)?.status == .verified, "a redelivered result leaves a completed session as it is")

        let deleted = try connection.execute(SessionsTable.deleteExpired(before: session.expiresAt.addingTimeInterval(1), limit: 1))
        #expect(deleted.affectedRows == 1, "no more than the limit")
        try connection.execute(SessionsTable.deleteExpired(before: session.expiresAt.addingTimeInterval(1), limit: 10))
        #expect(try find(session) == nil && find(other) == nil)
        try connection.execute(try SessionsTable.insert([row()]))
        #expect(try connection.execute(SessionsTable.deleteExpired(before: Date(), limit: 10)).affectedRows == 0, "a live session stays")
    }

    /// A test tenant's session ends test_verified (or test_rejected), which
    /// `GET /v1/sessions/{id}` shows as it is: never plain "verified".
    @Test func aTestTenantsSessionKeepsItsTestVerdict() throws {
        let session = row(tenant: "sandbox")
        try connection.execute(try SessionsTable.insert([session]))
        let outcome = #"{"data":{"assurance":{"kind":"simulator","level":"test"},"verdict":"test_verified"}}"#
        try connection.execute(SessionsTable.complete([.init(tenant: "sandbox", id: session.id, status: .testVerified, outcome: outcome)]))
        let done = try #require(try find(session))
        #expect(done.status == .testVerified && done.outcome == outcome)
    }

    /// Every state a completion may write is one the column's CHECK takes,
    /// and comes back as itself; `expired` is never stored, `failed` only by `failOverdue`.
    @Test func everySettledStateIsStoredAsItself() throws {
        let settled = SessionState.allCases.filter { $0.isSettled && $0 != .expired && $0 != .failed }
        #expect(settled.count == 4)
        for state in settled {
            let session = row()
            try connection.execute(try SessionsTable.insert([session]))
            try connection.execute(SessionsTable.complete([.init(tenant: "t1", id: session.id, status: state, outcome: "{}")]))
            #expect(try find(session)?.status == state)
        }
        #expect(SessionState(verdict: "expired") == nil && SessionState(verdict: "pending") == nil && SessionState(verdict: "failed") == nil)
    }
}
