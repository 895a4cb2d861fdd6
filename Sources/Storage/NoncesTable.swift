import Foundation
import Postgres

/// `nonces`: the nonces verified results used up, each kept only as a keyed
/// hash per tenant, with the event that used it first.
public enum NoncesTable {
    static let columns: [PostgresColumn] = [
        .init("tenant", "text"), .init("nonce_hash", "bytea"), .init("event_id", "text"), .init("used_at", "timestamptz"),
    ]

    /// A use of a nonce: (tenant, keyed hash) by `eventID`.
    public struct Use: Sendable {
        public let tenant: String
        public let hash: [UInt8]
        public let eventID: String

        public init(tenant: String, hash: [UInt8], eventID: String) {
            self.tenant = tenant
            self.hash = hash
            self.eventID = eventID
        }
    }

    /// Claims the nonces at `now`; one already claimed keeps its owner.
    /// `returningClaims`: the rows it inserted come back (tenant, nonce_hash, event_id).
    public static func claim(_ uses: [Use], at now: Date, returningClaims: Bool) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "nonces", columns: columns,
            rows: uses.map { [.text($0.tenant), .bytes($0.hash), .text($0.eventID), .timestamp(now)] },
            suffix: "ON CONFLICT (tenant, nonce_hash) DO NOTHING" + (returningClaims ? " RETURNING tenant, nonce_hash, event_id" : ""))
    }

    /// The owners of the uses' nonces (tenant, nonce_hash, event_id), whoever claimed them.
    public static func owners(of uses: [Use]) -> PostgresStatement {
        PostgresStatement("""
            SELECT n.tenant, n.nonce_hash, n.event_id FROM nonces n
            JOIN unnest($1::text[], $2::text[]) AS wanted(tenant, hash_hex)
              ON n.tenant = wanted.tenant AND n.nonce_hash = decode(wanted.hash_hex, 'hex')
            """, [.textArray(uses.map(\.tenant)), .textArray(uses.map { lowercaseHex($0.hash) })])
    }
}
