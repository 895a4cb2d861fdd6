import Foundation
import JSON
import MDoc

/// `veridoc.credential.status-changed.v1`: a credential accepted earlier has
/// since been revoked or suspended by its issuer (docs/revocation.md,
/// Schemas/credential-status-changed.v1.schema.json). Published on the
/// outcome topic once per result and new state: its id follows from both.
/// It names the request, never the list, the index or the identifier.
public struct StatusChangedEvent: Sendable {
    public static let eventType = "veridoc.credential.status-changed.v1"

    public let requestID: String
    public let tenant: String
    public let document: Int
    /// `revoked` or `suspended`.
    public let status: String
    /// What the result was accepted with: `valid` or `undetermined`.
    public let acceptedStatus: String
    public let detectedAt: Date
    public let source: String

    public init(requestID: String, tenant: String, document: Int, status: String, acceptedStatus: String, detectedAt: Date,
                source: String = OutcomeEvent.defaultSource) {
        self.requestID = requestID
        self.tenant = tenant
        self.document = document
        self.status = status
        self.acceptedStatus = acceptedStatus
        self.detectedAt = detectedAt
        self.source = source
    }

    /// From the request id and the new state: found again by another worker or pass, it is the same event.
    public static func id(forRequest requestID: String, status: String) -> String {
        OutcomeEvent.derivedID(Array("\(eventType)\u{0}\(requestID)\u{0}\(status)".utf8))
    }

    public var id: String { Self.id(forRequest: requestID, status: status) }

    public var jsonValue: JSONValue {
        [
            "specversion": "1.0",
            "id": .string(id),
            "source": .string(source),
            "type": .string(Self.eventType),
            "subject": .string(requestID),
            "time": .string(RFC3339.string(from: detectedAt)),
            "datacontenttype": "application/json",
            "data": [
                "requestId": .string(requestID), "tenant": .string(tenant), "document": .integer(document),
                "status": .string(status), "acceptedStatus": .string(acceptedStatus),
            ],
        ]
    }

    public func json() -> String { jsonValue.jsonString() }
}
