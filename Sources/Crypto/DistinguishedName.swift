import COpenSSL

/// An X.501 name as a flat list of attributes in certificate order
/// (multi-valued RDNs are flattened).
public struct DistinguishedName: Sendable, Hashable, CustomStringConvertible {
    /// `type` is OpenSSL's short name ("CN", "C", "ST", "O", "OU", "L", …) or
    /// the dotted OID for attributes OpenSSL has no name for.
    public var attributes: [(type: String, value: String)]

    public init(_ attributes: [(type: String, value: String)]) {
        self.attributes = attributes
    }

    init(x509Name name: OpaquePointer?) {
        guard let name else {
            self.attributes = []
            return
        }
        self.attributes = (0..<X509_NAME_entry_count(name)).compactMap { index in
            guard let entry = X509_NAME_get_entry(name, index) else { return nil }
            let object = X509_NAME_ENTRY_get_object(entry)
            let nid = OBJ_obj2nid(object)
            let type: String
            if nid != NID_undef, let shortName = OBJ_nid2sn(nid) {
                type = String(decoding: UnsafeRawBufferPointer(start: shortName, count: strlen(shortName)), as: UTF8.self)
            } else {
                type = objectIdentifierText(object) ?? "?"
            }
            return (type, X509_NAME_ENTRY_get_data(entry).map(attributeValueText) ?? "")
        }
    }

    /// The first attribute of `type`.
    public func first(_ type: String) -> String? {
        attributes.first { $0.type == type }?.value
    }

    public var commonName: String? { first("CN") }
    public var countryName: String? { first("C") }
    public var stateOrProvinceName: String? { first("ST") }
    public var organizationName: String? { first("O") }

    /// RFC 4514 escaping, but in certificate order (RFC 4514 reverses it) so
    /// it reads like the `openssl x509 -subject` output people compare against.
    public var description: String {
        attributes.map { "\($0.type)=\(escapedAttributeValue($0.value))" }.joined(separator: ", ")
    }

    public static func == (lhs: DistinguishedName, rhs: DistinguishedName) -> Bool {
        lhs.attributes.count == rhs.attributes.count
            && zip(lhs.attributes, rhs.attributes).allSatisfy { $0.type == $1.type && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(attributes.count)
        for attribute in attributes {
            hasher.combine(attribute.type)
            hasher.combine(attribute.value)
        }
    }
}

/// Any ASN.1 string type (PrintableString, BMPString, …) as UTF-8; bytes
/// OpenSSL cannot convert are decoded leniently rather than dropped.
private func attributeValueText(_ string: UnsafeMutablePointer<ASN1_STRING>) -> String {
    var utf8: UnsafeMutablePointer<UInt8>?
    let length = ASN1_STRING_to_UTF8(&utf8, string)
    guard length >= 0, let utf8 else {
        ERR_clear_error()
        return String(decoding: asn1StringBytes(string), as: UTF8.self)
    }
    defer { CRYPTO_free(utf8, #fileID, #line) }
    return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
}

private func escapedAttributeValue(_ value: String) -> String {
    var escaped = ""
    let characters = Array(value)
    for (index, character) in characters.enumerated() {
        let isEdgeSpace = character == " " && (index == 0 || index == characters.count - 1)
        if ",+\"\\<>;=".contains(character) || isEdgeSpace || (index == 0 && character == "#") {
            escaped.append("\\")
        }
        escaped.append(character)
    }
    return escaped
}
