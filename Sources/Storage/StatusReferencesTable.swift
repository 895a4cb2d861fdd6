import Foundation
import Postgres

/// `status_references`: the revocation references of accepted results,
/// kept while the result's values are (`retain_until`), so that a list
/// refetched later can be read again for them (docs/revocation.md). A
/// reference is a stable handle on one credential: it is deleted with the
/// values, by purge and by `forget`, and appears in no log.
public enum StatusReferencesTable: RetainedRows {
    public static let tableName = "status_references"
    public static let keyColumns = "event_id, document, list_kind"

    static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("document", "integer"), .init("list_kind", "text"), .init("tenant", "text"),
        .init("list_uri", "text"), .init("list_index", "bigint"), .init("list_id", "bytea"), .init("reference_certificate", "bytea"),
        .init("document_signer", "bytea"), .init("issuing_anchor", "bytea"), .init("accepted_status", "text"),
        .init("retain_until", "timestamptz"),
    ]

    /// `list_kind`, here and in `status_lists`.
    public enum Kind: String, Sendable {
        case statusList = "status_list"
        case identifierList = "identifier_list"
        /// Here: a document whose MSO names no list, and one of whose
        /// certificates names a CRL: `list_uri` is that CRL's; the others
        /// follow from the document signer and anchor kept with it.
        case certificateRevocationList = "crl"
    }

    /// One reference of one document of an accepted result.
    public struct Row: Sendable, Equatable {
        public var eventID: String
        public var document: Int32
        public var kind: Kind
        public var tenant: String
        public var uri: String
        /// The status list index (status lists only).
        public var index: Int64?
        /// The identifier (identifier lists only).
        public var id: [UInt8]?
        public var referenceCertificate: [UInt8]?
        /// DER of the document signer and of the IACA its path ended at: who may sign the list.
        public var documentSigner: [UInt8]
        public var issuingAnchor: [UInt8]
        /// `valid`, or `undetermined` (a tenant in `bestEffort`).
        public var acceptedStatus: String
        public var retainUntil: RetainUntil

        public init(eventID: String, document: Int32, kind: Kind, tenant: String, uri: String, index: Int64?, id: [UInt8]?,
                    referenceCertificate: [UInt8]?, documentSigner: [UInt8], issuingAnchor: [UInt8], acceptedStatus: String,
                    retainUntil: RetainUntil) {
            self.eventID = eventID
            self.document = document
            self.kind = kind
            self.tenant = tenant
            self.uri = uri
            self.index = index
            self.id = id
            self.referenceCertificate = referenceCertificate
            self.documentSigner = documentSigner
            self.issuingAnchor = issuingAnchor
            self.acceptedStatus = acceptedStatus
            self.retainUntil = retainUntil
        }
    }

    /// A redelivered result's references are already there: kept as they were.
    public static func insert(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "status_references", columns: columns,
            rows: rows.map { row in
                [.text(row.eventID), .int(Int64(row.document)), .text(row.kind.rawValue), .text(PostgresValue.storable(row.tenant)),
                 .text(PostgresValue.storable(row.uri)), row.index.map(PostgresValue.int) ?? .null, row.id.map(PostgresValue.bytes) ?? .null,
                 row.referenceCertificate.map(PostgresValue.bytes) ?? .null, .bytes(row.documentSigner), .bytes(row.issuingAnchor),
                 .text(row.acceptedStatus), row.retainUntil.parameter]
            },
            suffix: "ON CONFLICT DO NOTHING")
    }

    /// The lists retained references name (columns `list_kind`, `list_uri`), at most `limit`.
    public static func listsInUse(at now: Date, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            SELECT DISTINCT list_kind, list_uri FROM status_references WHERE retain_until > $1 ORDER BY list_kind, list_uri LIMIT $2
            """, [.timestamp(now), .int(Int64(limit))])
    }

    /// Up to `limit` retained references to one list whose result has no
    /// later status yet, after (`afterEventID`, `afterDocument`) in keyset order.
    public static func references(to kind: Kind, uri: String, after afterEventID: String, _ afterDocument: Int32, at now: Date,
                                  limit: Int) -> PostgresStatement {
        PostgresStatement("""
            SELECT s.event_id, s.document, s.tenant, s.list_index, s.list_id, s.reference_certificate, s.document_signer, s.issuing_anchor,
                   s.accepted_status
            FROM status_references s JOIN results r ON r.event_id = s.event_id
            WHERE s.list_kind = $1 AND s.list_uri = $2 AND (s.event_id, s.document) > ($3, $4) AND s.retain_until > $5
              AND r.later_status IS NULL
            ORDER BY s.event_id, s.document LIMIT $6
            """, [.text(kind.rawValue), .text(uri), .text(afterEventID), .int(Int64(afterDocument)), .timestamp(now), .int(Int64(limit))])
    }
}
