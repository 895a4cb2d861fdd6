import CBOR

/// The MSO's `status` member (ISO/IEC 18013-5 2nd edition §12.3.6): where
/// the issuer publishes whether this credential still stands. Read only
/// after the issuer signature over the MSO verified; until then its URIs
/// are the sender's, not the issuer's.
///
/// ```
/// Status = { ? "status_list": StatusListInfo, ? "identifier_list": IdentifierListInfo, * tstr => RFU }
/// StatusListInfo = { "idx": uint, "uri": tstr, ? "certificate": bstr, * tstr => RFU }
/// IdentifierListInfo = { "id": bstr, "uri": tstr, ? "certificate": bstr, * tstr => RFU }
/// ```
/// Members the standard reserves for future use are ignored, inside the two
/// references and beside them; a known member of the wrong type is malformed.
public struct MSOStatus: Sendable, Equatable {
    public struct StatusListReference: Sendable, Equatable, Hashable {
        public let index: UInt64
        public let uri: String
        /// DER of the certificate that signs the list, when the issuer names it.
        public let certificate: [UInt8]?

        public init(index: UInt64, uri: String, certificate: [UInt8]? = nil) {
            (self.index, self.uri, self.certificate) = (index, uri, certificate)
        }
    }

    public struct IdentifierListReference: Sendable, Equatable, Hashable {
        public let id: [UInt8]
        public let uri: String
        public let certificate: [UInt8]?

        public init(id: [UInt8], uri: String, certificate: [UInt8]? = nil) {
            (self.id, self.uri, self.certificate) = (id, uri, certificate)
        }
    }

    public let statusList: StatusListReference?
    public let identifierList: IdentifierListReference?

    /// Whether the issuer named any list at all (an empty or RFU-only status names none).
    public var hasReference: Bool { statusList != nil || identifierList != nil }

    public init(statusList: StatusListReference? = nil, identifierList: IdentifierListReference? = nil) {
        self.statusList = statusList
        self.identifierList = identifierList
    }

    public init(_ item: CBORItem) throws(MDocError) {
        guard item.entries != nil else { throw .malformed("MSO.status is not a map") }
        statusList = try item["status_list"].map { info throws(MDocError) in
            let (uri, certificate) = try Self.common(info, "MSO.status.status_list")
            guard let index = info["idx"]?.unsigned else { throw .malformed("MSO.status.status_list.idx is not an unsigned integer") }
            return StatusListReference(index: index, uri: uri, certificate: certificate)
        }
        identifierList = try item["identifier_list"].map { info throws(MDocError) in
            let (uri, certificate) = try Self.common(info, "MSO.status.identifier_list")
            guard let id = info["id"]?.bytes else { throw .malformed("MSO.status.identifier_list.id is not a byte string") }
            return IdentifierListReference(id: Array(id), uri: uri, certificate: certificate)
        }
    }

    /// The members both references share: a map, its `uri` text, its optional `certificate` bytes.
    private static func common(_ info: CBORItem, _ context: String) throws(MDocError) -> (uri: String, certificate: [UInt8]?) {
        guard info.entries != nil else { throw .malformed("\(context) is not a map") }
        guard let uri = info["uri"]?.text else { throw .malformed("\(context).uri is not a text string") }
        var certificate: [UInt8]?
        if let member = info["certificate"] {
            guard let bytes = member.bytes else { throw .malformed("\(context).certificate is not a byte string") }
            certificate = Array(bytes)
        }
        return (uri, certificate)
    }
}
