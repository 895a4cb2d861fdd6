import Foundation
import Postgres

/// `results`: one row per event id, its verdict and the non-personal facts
/// analytics count. Rows are inserted once and never deleted.
public enum ResultsTable {
    /// The table's columns, in the order `parameters(_:)` gives a row's values.
    static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("tenant", "text"), .init("flow", "text"), .init("verdict", "text"), .init("reason_codes", "text[]"),
        .init("doc_type", "text"), .init("issuer_subject", "text"), .init("issuer_country", "text"), .init("mso_signed", "timestamptz"),
        .init("mso_valid_from", "timestamptz"), .init("mso_valid_until", "timestamptz"), .init("event_time", "timestamptz"),
        .init("received_at", "timestamptz"), .init("verified_at", "timestamptz"), .init("processing_seconds", "double precision"),
        .init("source_topic", "text"), .init("source_partition", "integer"), .init("source_offset", "bigint"),
        .init("assurance", "text"), .init("test_kind", "text"), .init("element_groups", "json"),
        .init("device_auth", "text"), .init("device_reader", "text"), .init("revocation_status", "text"), .init("age_checks", "text[]"),
    ]

    /// One result. Optional text comes from the event or the credential (an
    /// unknown tenant, a document's names) and is stored even with a U+0000 in
    /// it (`PostgresValue.storable`); optional instants come from there too
    /// and are stored as NULL outside what PostgreSQL holds
    /// (`PostgresValue.storableTimestamp`): either would otherwise fail the
    /// whole batch's statement.
    public struct Row: Sendable, Equatable {
        public var eventID: String
        public var tenant: String?
        public var flow: String?
        /// `verified` or `rejected`.
        public var verdict: String
        public var reasonCodes: [String]
        public var docType: String?
        public var issuerSubject: String?
        public var issuerCountry: String?
        public var msoSigned: Date?
        public var msoValidFrom: Date?
        public var msoValidUntil: Date?
        public var eventTime: Date?
        public var receivedAt: Date
        public var verifiedAt: Date
        public var processingSeconds: Double
        public var sourceTopic: String
        public var sourcePartition: Int32
        public var sourceOffset: Int64
        /// `production` or `test`.
        public var assurance: String
        public var testKind: String?
        public var elementGroups: ElementGroupsColumn.Value
        /// `signature` or `mac`.
        public var deviceAuth: String?
        /// The reader a MAC was computed for.
        public var deviceReader: String?
        /// The response's revocation status (`CredentialStatus.word`); nil when no document got that far.
        public var revocationStatus: String? = nil
        /// The ages the request's age checks asked, never their answers nor
        /// what answered them; nil when the request asked none.
        public var ageChecks: [String]? = nil

        public init(eventID: String, tenant: String?, flow: String?, verdict: String, reasonCodes: [String], docType: String?,
                    issuerSubject: String?, issuerCountry: String?, msoSigned: Date?, msoValidFrom: Date?, msoValidUntil: Date?,
                    eventTime: Date?, receivedAt: Date, verifiedAt: Date, processingSeconds: Double, sourceTopic: String,
                    sourcePartition: Int32, sourceOffset: Int64, assurance: String, testKind: String?,
                    elementGroups: ElementGroupsColumn.Value, deviceAuth: String?, deviceReader: String?) {
            self.eventID = eventID
            self.tenant = tenant
            self.flow = flow
            self.verdict = verdict
            self.reasonCodes = reasonCodes
            self.docType = docType
            self.issuerSubject = issuerSubject
            self.issuerCountry = issuerCountry
            self.msoSigned = msoSigned
            self.msoValidFrom = msoValidFrom
            self.msoValidUntil = msoValidUntil
            self.eventTime = eventTime
            self.receivedAt = receivedAt
            self.verifiedAt = verifiedAt
            self.processingSeconds = processingSeconds
            self.sourceTopic = sourceTopic
            self.sourcePartition = sourcePartition
            self.sourceOffset = sourceOffset
            self.assurance = assurance
            self.testKind = testKind
            self.elementGroups = elementGroups
            self.deviceAuth = deviceAuth
            self.deviceReader = deviceReader
        }
    }

    /// A row's values in `columns`' order.
    static func parameters(_ row: Row) -> [PostgresValue] {
        func text(_ value: String?) -> PostgresValue { value.map { .text(PostgresValue.storable($0)) } ?? .null }
        return [
            .text(row.eventID), text(row.tenant), text(row.flow), .text(row.verdict), .textArray(row.reasonCodes), text(row.docType),
            text(row.issuerSubject), text(row.issuerCountry), .storableTimestamp(row.msoSigned), .storableTimestamp(row.msoValidFrom),
            .storableTimestamp(row.msoValidUntil), .storableTimestamp(row.eventTime), .timestamp(row.receivedAt), .timestamp(row.verifiedAt),
            .double(row.processingSeconds), .text(row.sourceTopic), .int(Int64(row.sourcePartition)), .int(row.sourceOffset),
            .text(row.assurance), text(row.testKind), row.elementGroups.parameter, text(row.deviceAuth), text(row.deviceReader), text(row.revocationStatus),
            row.ageChecks.map(PostgresValue.textArray) ?? .null,
        ]
    }

    /// Inserts the rows whose event id is not stored yet and returns those ids
    /// (column `event_id`): an id already there is a redelivery.
    public static func insertNew(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(into: "results", columns: columns, rows: rows.map(parameters), suffix: "ON CONFLICT (event_id) DO NOTHING RETURNING event_id")
    }

    /// A result inserted in this transaction as verified turned out to be a
    /// replay: its verdict and reasons become the replay's.
    public static func recordReplay(eventID: String, verdict: String, reasonCodes: [String]) -> PostgresStatement {
        PostgresStatement("UPDATE results SET verdict = $2, reason_codes = $3::text[] WHERE event_id = $1",
                          [.text(eventID), .text(verdict), .textArray(reasonCodes)])
    }

    /// A retained accepted result whose credential turned `status`
    /// (revoked or suspended) since: recorded once, the first time; the
    /// statement returns the row only when it recorded it.
    public static func recordLaterStatus(eventID: String, status: String) -> PostgresStatement {
        PostgresStatement("""
            UPDATE results SET later_status = $2, later_status_at = now()
            WHERE event_id = $1 AND later_status IS NULL AND verdict IN ('verified', 'test_verified') RETURNING event_id, tenant
            """, [.text(eventID), .text(status)])
    }

    /// How many results match a request (`event_id`) or a tenant: erasure keeps them and says so.
    public static func count(matching scope: ErasureScope) -> PostgresStatement {
        PostgresStatement("SELECT count(*) AS count FROM results WHERE \(scope.column) = $1", [.text(scope.value)])
    }
}

