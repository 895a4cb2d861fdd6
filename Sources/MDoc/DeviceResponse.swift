import CBOR

/// ISO/IEC 18013-5 §8.3.2.1.2.2 DeviceResponse, parsed without trusting it.
public struct DeviceResponse: Sendable {
    public let version: String
    public let documents: [Document]
    public let status: Int64

    public init(_ item: CBORItem) throws(MDocError) {
        version = try structure { () throws(CBORError) in try item.require("version", in: "DeviceResponse").requireText("DeviceResponse.version") }
        status = try structure { () throws(CBORError) in try item.require("status", in: "DeviceResponse").requireInt("DeviceResponse.status") }
        guard version.hasPrefix("1.") else { throw .unsupported("DeviceResponse version \(version)") }
        if let list = item["documents"] {
            let items = try structure { () throws(CBORError) in try list.requireArray("DeviceResponse.documents") }
            var documents: [Document] = []
            for (index, document) in items.enumerated() {
                documents.append(try Document(document, context: "documents[\(index)]"))
            }
            self.documents = documents
        } else {
            documents = []
        }
    }

    public init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        try self.init(item)
    }
}

/// One document of a DeviceResponse.
public struct Document: Sendable {
    public let docType: String
    public let issuerSigned: IssuerSigned
    public let deviceSigned: DeviceSigned?

    public init(_ item: CBORItem, context: String) throws(MDocError) {
        docType = try structure { () throws(CBORError) in try item.require("docType", in: context).requireText("\(context).docType") }
        let issuer = try structure { () throws(CBORError) in try item.require("issuerSigned", in: context) }
        issuerSigned = try IssuerSigned(issuer, context: "\(context).issuerSigned")
        if let device = item["deviceSigned"] {
            deviceSigned = try DeviceSigned(device, context: "\(context).deviceSigned")
        } else {
            deviceSigned = nil
        }
    }
}

/// `IssuerSigned = {? "nameSpaces": IssuerNameSpaces, "issuerAuth": COSE_Sign1}`.
public struct IssuerSigned: Sendable {
    /// Namespaces in received order, each with its items in received order.
    public let nameSpaces: [(name: String, items: [IssuerSignedItem])]
    public let issuerAuth: COSESign1

    public init(_ item: CBORItem, context: String) throws(MDocError) {
        let auth = try structure { () throws(CBORError) in try item.require("issuerAuth", in: context) }
        issuerAuth = try COSESign1(auth, context: "\(context).issuerAuth")
        var spaces: [(name: String, items: [IssuerSignedItem])] = []
        if let map = item["nameSpaces"] {
            let entries = try structure { () throws(CBORError) in try map.requireEntries("\(context).nameSpaces") }
            for entry in entries {
                let name = try structure { () throws(CBORError) in try entry.key.requireText("\(context).nameSpaces key") }
                let list = try structure { () throws(CBORError) in try entry.value.requireArray("\(context).nameSpaces[\(name)]") }
                var items: [IssuerSignedItem] = []
                items.reserveCapacity(list.count)
                try list.withUnsafeBufferPointer { (elements) throws(MDocError) in
                    for index in elements.indices {
                        items.append(try IssuerSignedItem(elements[index], lazyContext: "\(context).nameSpaces[\(name)][\(index)]"))
                    }
                }
                spaces.append((name, items))
            }
        }
        nameSpaces = spaces
    }

    public init(bytes: ArraySlice<UInt8>) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder().decode(bytes) }
        try self.init(item, context: "IssuerSigned")
    }
}

/// `IssuerSignedItemBytes = #6.24(bstr .cbor IssuerSignedItem)`, with the
/// received tag-24 bytes that the MSO digest covers.
public struct IssuerSignedItem: Sendable {
    /// The whole `#6.24(bstr)` encoding as received: what the digest is computed over.
    public let taggedBytes: ArraySlice<UInt8>
    public let digestID: UInt64
    public let random: ArraySlice<UInt8>
    public let elementIdentifier: String
    public let elementValue: CBORItem

    public init(_ item: CBORItem, context: String) throws(MDocError) {
        try self.init(item, lazyContext: context)
    }

    /// `context` names the item in errors and is built only for one: a
    /// document discloses dozens of items and almost never has an error.
    init(_ item: CBORItem, lazyContext context: @autoclosure () -> String) throws(MDocError) {
        guard let (tag, wrapped) = item.tagged, tag == 24, let content = wrapped.bytes else {
            throw MDocError(CBORError.unexpectedType(expected: "#6.24(bstr)", context: context()))
        }
        try self.init(taggedBytes: item.encoded, content: content, lazyContext: context())
    }

    /// From the received `#6.24(bstr)` and that bstr's content.
    init(taggedBytes: ArraySlice<UInt8>, content: ArraySlice<UInt8>, lazyContext context: @autoclosure () -> String) throws(MDocError) {
        self.taggedBytes = taggedBytes
        if let fields = Self.commonForm(content) {
            digestID = fields.digestID
            random = fields.random
            elementIdentifier = fields.elementIdentifier
            elementValue = fields.elementValue
            return
        }
        let inner = try structure { () throws(CBORError) in try CBORDecoder().decode(content) }
        let entries = inner.entries ?? []
        // One pass over the four entries, noting where each field is; fields
        // are then read in place. Through the buffer entries are borrowed:
        // subscripting the array copied an entry per comparison.
        var digestID: Int?, random: Int?, elementIdentifier: Int?, elementValue: Int?
        entries.withUnsafeBufferPointer { entries in
            for entry in entries.indices {
                if entries[entry].hasTextKey("digestID") {
                    digestID = entry
                } else if entries[entry].hasTextKey("random") {
                    random = entry
                } else if entries[entry].hasTextKey("elementIdentifier") {
                    elementIdentifier = entry
                } else if entries[entry].hasTextKey("elementValue") {
                    elementValue = entry
                }
            }
        }
        guard let digestID, case .unsigned(let id) = entries[digestID].value.content else {
            throw .malformed("\(context()): digestID is not an unsigned integer")
        }
        self.digestID = id
        guard let random else { throw MDocError(CBORError.missingKey("random", context: context())) }
        guard case .bytes(let randomBytes) = entries[random].value.content else {
            throw MDocError(CBORError.unexpectedType(expected: "byte string", context: "\(context()).random"))
        }
        self.random = randomBytes
        guard let elementIdentifier else { throw MDocError(CBORError.missingKey("elementIdentifier", context: context())) }
        guard case .text(let identifier) = entries[elementIdentifier].value.content else {
            throw MDocError(CBORError.unexpectedType(expected: "text string", context: "\(context()).elementIdentifier"))
        }
        self.elementIdentifier = identifier
        guard let elementValue else { throw MDocError(CBORError.missingKey("elementValue", context: context())) }
        self.elementValue = entries[elementValue].value
    }

    private struct Fields {
        let digestID: UInt64
        let random: ArraySlice<UInt8>
        let elementIdentifier: String
        let elementValue: CBORItem
    }

    /// The form nearly every issuer writes — a definite map of exactly the
    /// four fields with text keys, none twice, nothing after — read in place
    /// (building the map, its entries, keys and duplicate check were a third
    /// of reading an item): digestID, random and elementIdentifier by the
    /// cursor, only elementValue by the decoder, the items counted as one
    /// structure. Anything else is nil, and the general path reads it or
    /// rejects it with the precise reason.
    private static func commonForm(_ content: ArraySlice<UInt8>) -> Fields? {
        guard var cursor = CBORCursor(content), cursor.mapCount() == 4 else { return nil }
        var digestID: UInt64?, random: ArraySlice<UInt8>?, identifier: String?, value: CBORItem?
        for _ in 0..<4 {
            guard let key = cursor.textBytes() else { return nil }
            if key.isUTF8("digestID") {
                guard digestID == nil, let id = cursor.unsigned() else { return nil }
                digestID = id
            } else if key.isUTF8("random") {
                guard random == nil, let bytes = cursor.bytes() else { return nil }
                random = bytes
            } else if key.isUTF8("elementIdentifier") {
                guard identifier == nil, let text = cursor.text() else { return nil }
                identifier = text
            } else if key.isUTF8("elementValue") {
                guard value == nil, let item = cursor.item(depth: 1) else { return nil }
                value = item
            } else {
                return nil
            }
        }
        guard cursor.isAtEnd, let digestID, let random, let identifier, let value else { return nil }
        return Fields(digestID: digestID, random: random, elementIdentifier: identifier, elementValue: value)
    }
}

/// `DeviceSigned = {"nameSpaces": DeviceNameSpacesBytes, "deviceAuth": DeviceAuth}`.
public struct DeviceSigned: Sendable {
    /// `#6.24(bstr .cbor DeviceNameSpaces)` as received; DeviceAuthentication embeds it verbatim.
    public let nameSpacesBytes: ArraySlice<UInt8>
    /// Element identifiers the device signed, per namespace.
    public let nameSpaces: [(name: String, elements: [String])]
    public let authentication: Authentication

    public enum Authentication: Sendable {
        case signature(COSESign1)
        case mac(COSEMac0)
    }

    public init(_ item: CBORItem, context: String) throws(MDocError) {
        let spaces = try structure { () throws(CBORError) in try item.require("nameSpaces", in: context) }
        nameSpacesBytes = spaces.encoded
        let decoded = try structure { () throws(CBORError) in try spaces.decodeEmbedded("\(context).nameSpaces") }
        let entries = try structure { () throws(CBORError) in try decoded.requireEntries("\(context).nameSpaces") }
        var names: [(name: String, elements: [String])] = []
        for entry in entries {
            let name = try structure { () throws(CBORError) in try entry.key.requireText("\(context).nameSpaces key") }
            let elements = try structure { () throws(CBORError) in try entry.value.requireEntries("\(context).nameSpaces[\(name)]") }
            var identifiers: [String] = []
            for element in elements {
                identifiers.append(try structure { () throws(CBORError) in try element.key.requireText("\(context).nameSpaces[\(name)] key") })
            }
            names.append((name, identifiers))
        }
        nameSpaces = names
        let auth = try structure { () throws(CBORError) in try item.require("deviceAuth", in: context) }
        if let signature = auth["deviceSignature"] {
            authentication = .signature(try COSESign1(signature, context: "\(context).deviceSignature"))
        } else if let mac = auth["deviceMac"] {
            authentication = .mac(try COSEMac0(mac, context: "\(context).deviceMac"))
        } else {
            throw .malformed("\(context).deviceAuth has neither deviceSignature nor deviceMac")
        }
    }
}
