import Foundation
import Postgres
import Storage

/// Right to erasure: removes a person's (one request's) or a whole tenant's
/// retained values, revocation references and responses still waiting for
/// the broker on demand, and the sealed claims of their outcomes still in
/// the outbox, kept with a session or waiting as a webhook delivery. Results and element metadata stay: they are the
/// non-personal facts analytics count.
public struct Eraser: Sendable {
    public let batchSize: Int

    public init(batchSize: Int) {
        self.batchSize = batchSize
    }

    public struct Erased: Sendable, Equatable {
        public var values = 0
        public var claims = 0
        /// Revocation references (a stable handle on each credential) removed.
        public var statusReferences = 0
        /// Accepted responses still waiting for the broker, removed (their sessions fail at expiry).
        public var submissions = 0
        /// Results rows matching the request/tenant, kept.
        public var resultsKept = 0
    }

    public func forget(request eventID: String, on connection: PostgresConnection) throws -> Erased {
        try erase(.request(eventID: eventID), on: connection)
    }

    public func forget(tenant: String, on connection: PostgresConnection) throws -> Erased {
        try erase(.tenant(tenant), on: connection)
    }

    /// Bounded statements, each committed on its own, so erasing a large
    /// tenant never holds locks the write path waits for.
    private func erase(_ scope: ErasureScope, on connection: PostgresConnection) throws -> Erased {
        var erased = Erased()
        erased.values = try connection.repeatUntilDone(batchSize: batchSize) { ElementValuesTable.delete(matching: scope, limit: $0) }
        erased.statusReferences = try connection.repeatUntilDone(batchSize: batchSize) { StatusReferencesTable.delete(matching: scope, limit: $0) }
        erased.submissions = try connection.repeatUntilDone(batchSize: batchSize) { SubmissionsTable.delete(matching: scope, limit: $0) }
        erased.claims = try connection.repeatUntilDone(batchSize: batchSize) { OutboxTable.stripClaims(matching: scope, limit: $0) }
        erased.claims += try connection.repeatUntilDone(batchSize: batchSize) { SessionsTable.stripClaims(matching: scope, limit: $0) }
        erased.claims += try connection.repeatUntilDone(batchSize: batchSize) { WebhookDeliveriesTable.stripClaims(matching: scope, limit: $0) }
        erased.resultsKept = Int(try connection.execute(ResultsTable.count(matching: scope)).int(0, "count") ?? 0)
        return erased
    }
}
