import Foundation
import Postgres

/// `sessions`: the session API's sessions. A row is made by
/// `POST /v1/sessions`, takes the digest of the first response submitted
/// to it, and is completed by the worker in the transaction that stores the
/// result; the retention loop deletes it some time after it expired.
public enum SessionsTable {
    /// The channel every change of a session's state is `NOTIFY`d on (at
    /// its transaction's commit), its id as the payload: long polls wait on
    /// it instead of reading the row on a timer.
    public static let changesChannel = "veridoc_sessions"

    /// What the connection that waits for those notifications runs first.
    public static let listenForChanges = PostgresStatement("LISTEN \(changesChannel)")
    static let columns: [PostgresColumn] = [
        .init("tenant", "text"), .init("id", "uuid"), .init("flow", "text"), .init("audience", "text"), .init("doc_type", "text"),
        .init("requested", "text"), .init("nonce", "bytea"), .init("encryption_info", "text"), .init("reference", "text"),
        .init("created_at", "timestamptz"), .init("expires_at", "timestamptz"),
    ]

    /// A session as it was created.
    public struct Row: Sendable, Equatable {
        public var tenant: String
        public var id: UUID
        public var flow: String
        /// The merchant identifier (app), the origin (web), or "" (iso).
        public var audience: String
        public var docType: String
        /// The requested elements as the event carries them (JSON).
        public var requested: String
        /// The issued nonce; the iso flow's session token.
        public var nonce: [UInt8]
        /// apple-wallet-web: the EncryptionInfo, exactly as the request carried it.
        public var encryptionInfo: String?
        public var reference: String?
        public var createdAt: Date
        public var expiresAt: Date

        public init(tenant: String, id: UUID, flow: String, audience: String, docType: String, requested: String, nonce: [UInt8],
                    encryptionInfo: String?, reference: String?, createdAt: Date, expiresAt: Date) {
            self.tenant = tenant
            self.id = id
            self.flow = flow
            self.audience = audience
            self.docType = docType
            self.requested = requested
            self.nonce = nonce
            self.encryptionInfo = encryptionInfo
            self.reference = reference
            self.createdAt = createdAt
            self.expiresAt = expiresAt
        }
    }

    /// Several sessions in one statement (the session writer's batches).
    public static func insert(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(into: "sessions", columns: columns, rows: rows.map(values))
    }

    /// A row's values in `columns` order.
    private static func values(_ row: Row) -> [PostgresValue] {
        [.text(row.tenant), .text(row.id.uuidString.lowercased()), .text(row.flow), .text(row.audience), .text(row.docType),
         .text(row.requested), .bytes(row.nonce), row.encryptionInfo.map(PostgresValue.text) ?? .null,
         row.reference.map(PostgresValue.text) ?? .null, .timestamp(row.createdAt), .timestamp(row.expiresAt)]
    }

    /// A creation's `Idempotency-Key` and the digest of the body it came with.
    public struct Idempotency: Sendable, Equatable {
        public let key: String
        public let requestDigest: [UInt8]

        public init(key: String, requestDigest: [UInt8]) {
            self.key = key
            self.requestDigest = requestDigest
        }
    }

    /// One session, its key taken: alone, so that a key another creation
    /// holds already leaves no row (and no failed batch) but an empty answer.
    public static func insert(_ row: Row, idempotency: Idempotency) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "sessions", columns: columns + [.init("idempotency_key", "text"), .init("request_digest", "bytea")],
            rows: [values(row) + [.text(idempotency.key), .bytes(idempotency.requestDigest)]],
            suffix: "ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id")
    }

    /// A session as it stands: its row, and how far it got.
    public struct Stored: Sendable {
        public let row: Row
        public let status: SessionState
        public let responseDigest: [UInt8]?
        /// The creation's key and body digest, when it came with an Idempotency-Key.
        public let idempotency: Idempotency?
        /// Why a `failed` session failed (`FailureReason`).
        public let failureReason: String?
        /// The outcome event's JSON, once the worker stored the result.
        public let outcome: String?
        /// How long past its expiry it may stay processing (`processingGrace` unless told otherwise).
        public var processingGrace: TimeInterval = SessionsTable.processingGrace

        /// The state a client sees at `now`: a pending session past its expiry
        /// is expired; one still processing `processingGrace` past it has
        /// failed (as `failOverdue` records).
        public func state(at now: Date) -> SessionState {
            switch status {
            case .pending where row.expiresAt <= now: .expired
            case .processing where row.expiresAt.addingTimeInterval(processingGrace) <= now: .failed
            default: status
            }
        }
    }

    /// What `find` and its siblings select, in the order `stored` reads.
    private static let storedColumns = """
        tenant, id::text AS id, flow, audience, doc_type, requested, nonce, encryption_info, reference, created_at, expires_at,
        status, response_digest, outcome, idempotency_key, request_digest, failure_reason
        """

    /// The tenant's session `id` (no row: not the tenant's, or gone).
    public static func find(tenant: String, id: UUID) -> PostgresStatement {
        PostgresStatement("SELECT \(storedColumns) FROM sessions WHERE tenant = $1 AND id = $2::uuid", [.text(tenant), .text(id.uuidString.lowercased())])
    }

    /// The tenant's session made with Idempotency-Key `key`.
    public static func find(tenant: String, idempotencyKey key: String) -> PostgresStatement {
        PostgresStatement("SELECT \(storedColumns) FROM sessions WHERE tenant = $1 AND idempotency_key = $2", [.text(tenant), .text(key)])
    }

    /// The tenant's newest `limit` sessions with the integrator's `reference`, newest first.
    public static func find(tenant: String, reference: String, limit: Int) -> PostgresStatement {
        PostgresStatement("SELECT \(storedColumns) FROM sessions WHERE tenant = $1 AND reference = $2 ORDER BY created_at DESC, id LIMIT $3",
                          [.text(tenant), .text(reference), .int(Int64(limit))])
    }

    /// The session in row `index` of a `find` answer; nil past its rows.
    public static func stored(_ result: PostgresResult, at index: Int = 0) -> Stored? {
        guard index < result.rowCount, let tenant = result.string(index, "tenant"), let id = result.string(index, "id").flatMap(UUID.init(uuidString:)),
              let flow = result.string(index, "flow"), let audience = result.string(index, "audience"), let docType = result.string(index, "doc_type"),
              let requested = result.string(index, "requested"), let nonce = result.bytes(index, "nonce"), let created = result.date(index, "created_at"),
              let expires = result.date(index, "expires_at"), let status = result.string(index, "status").flatMap(SessionState.init(rawValue:))
        else { return nil }
        let row = Row(tenant: tenant, id: id, flow: flow, audience: audience, docType: docType, requested: requested, nonce: nonce,
                      encryptionInfo: result.string(index, "encryption_info"), reference: result.string(index, "reference"),
                      createdAt: created, expiresAt: expires)
        var idempotency: Idempotency?
        if let key = result.string(index, "idempotency_key"), let digest = result.bytes(index, "request_digest") {
            idempotency = Idempotency(key: key, requestDigest: digest)
        }
        return Stored(row: row, status: status, responseDigest: result.bytes(index, "response_digest"), idempotency: idempotency,
                      failureReason: result.string(index, "failure_reason"), outcome: result.string(index, "outcome"))
    }

    /// Takes the first response for the session: its digest, and `processing`,
    /// if no response was taken yet and the session has not expired at `now`.
    /// Returns the id when it took this one; no row otherwise (then `find`
    /// tells why: gone, expired, this response again, or another one).
    public static func takeResponse(tenant: String, id: UUID, digest: [UInt8], at now: Date) -> PostgresStatement {
        PostgresStatement("""
            WITH taken AS (
                UPDATE sessions SET response_digest = $3, submitted_at = $4, status = 'processing'
                WHERE tenant = $1 AND id = $2::uuid AND response_digest IS NULL AND expires_at > $4
                RETURNING id)
            SELECT id, pg_notify('\(changesChannel)', id::text) FROM taken
            """, [.text(tenant), .text(id.uuidString.lowercased()), .bytes(digest), .timestamp(now)])
    }

    /// Why a session failed.
    public enum FailureReason: String, Sendable, CaseIterable {
        /// It was still processing when it expired: no verdict came by then.
        case verificationTimeout = "verification_timeout"
    }

    /// How long past its expiry a processing session may still get its
    /// verdict, by default (`serve.processingGraceSeconds`): the workers
    /// accept an issued nonce up to 30 s past its expiry (their clock skew),
    /// so a session fails only once no verdict can come.
    public static let processingGrace: TimeInterval = 60

    /// Fails up to `limit` sessions still processing `processingGrace` past their expiry (one
    /// tenant's session `only` when given), so that every session ends; a
    /// verdict that comes after finds them completed and leaves them be.
    /// Returns the ids failed.
    public static func failOverdue(at now: Date, grace: TimeInterval = processingGrace, only: (tenant: String, id: UUID)? = nil,
                                   limit: Int = 1_000) -> PostgresStatement {
        let scope = only == nil ? "" : " AND tenant = $5 AND id = $6::uuid"
        var parameters: [PostgresValue] = [.timestamp(now), .text(FailureReason.verificationTimeout.rawValue), .int(Int64(limit)), .double(grace)]
        if let only { parameters += [.text(only.tenant), .text(only.id.uuidString.lowercased())] }
        return PostgresStatement("""
            WITH failed AS (
                UPDATE sessions SET status = 'failed', failure_reason = $2, completed_at = $1
                WHERE (tenant, id) IN (
                    SELECT tenant, id FROM sessions
                    WHERE status = 'processing' AND completed_at IS NULL AND expires_at <= $1 - make_interval(secs => $4)\(scope)
                    LIMIT $3 FOR UPDATE SKIP LOCKED)
                RETURNING id)
            SELECT id, pg_notify('\(changesChannel)', id::text) FROM failed
            """, parameters)
    }

    /// A session's end: its verdict and the outcome event.
    public struct Completion: Sendable {
        public let tenant: String
        public let id: UUID
        /// Settled: verified, rejected, or their test-mode forms.
        public let status: SessionState
        public let outcome: String

        public init(tenant: String, id: UUID, status: SessionState, outcome: String) {
            precondition(status.isSettled && status != .expired && status != .failed, "a completion settles a session with a verdict")
            self.tenant = tenant
            self.id = id
            self.status = status
            self.outcome = outcome
        }
    }

    /// Completes the sessions not completed yet (a redelivered result finds
    /// its session done and leaves it as it is).
    public static func complete(_ completions: [Completion]) -> PostgresStatement {
        PostgresStatement("""
            WITH completed AS (
                UPDATE sessions s SET status = c.status, outcome = c.outcome, completed_at = now()
                FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS c(tenant, id, status, outcome)
                WHERE s.tenant = c.tenant AND s.id = c.id AND s.completed_at IS NULL
                RETURNING s.id)
            SELECT id, pg_notify('\(changesChannel)', id::text) FROM completed
            """, [.textArray(completions.map(\.tenant)), .textArray(completions.map { $0.id.uuidString.lowercased() }),
                  .textArray(completions.map(\.status.rawValue)), .textArray(completions.map(\.outcome))])
    }

    /// Removes the sealed claims and the age answers (what an outcome holds
    /// of the holder) from up to `limit` session outcomes of one request
    /// (the outcome's requestId) or tenant.
    public static func stripClaims(matching scope: ErasureScope, limit: Int) -> PostgresStatement {
        ClaimsStripping(table: "sessions", column: "outcome", key: ["tenant", "id"], holdsClaims: "\(ClaimsStripping.jsonb("outcome")) -> 'data' ?| ARRAY['claims', 'ages']",
                        alsoSet: nil, requestRows: "id::text = $1", tenantRows: "tenant = $1")
            .statement(scope, limit: limit)
    }

    /// Deletes up to `limit` sessions that expired before `cutoff`.
    public static func deleteExpired(before cutoff: Date, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            DELETE FROM sessions WHERE ctid IN (SELECT ctid FROM sessions WHERE expires_at < $1 LIMIT $2)
            """, [.timestamp(cutoff), .int(Int64(limit))])
    }
}
