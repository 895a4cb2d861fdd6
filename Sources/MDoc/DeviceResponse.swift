import CBOR

/// ISO/IEC 18013-5 §8.3.2.1.2.2 DeviceResponse, parsed without trusting it.
public struct DeviceResponse: Sendable {
    public let version: String
    public let documents: [Document]
    public let status: Int64

    /// The most documents a response may hold. A wallet returns one per
    /// requested docType (Apple's flows: one); each costs two signature
    /// verifications and a certificate path, so thousands in one event
    /// would cost a pool thread what thousands of events do.
    public static let maxDocuments = 16

    /// `limits` are those of the nested decodes (the event's budget, where it has one).
    public init(_ item: CBORItem, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        version = try structure { () throws(CBORError) in try item.require("version", in: "DeviceResponse").requireText("DeviceResponse.version") }
        status = try structure { () throws(CBORError) in try item.require("status", in: "DeviceResponse").requireInt("DeviceResponse.status") }
        guard version.hasPrefix("1.") else { throw .unsupported("DeviceResponse version \(version)") }
        if let list = item["documents"] {
            let items = try structure { () throws(CBORError) in try list.requireArray("DeviceResponse.documents") }
            guard items.count <= Self.maxDocuments else {
                throw .malformed("DeviceResponse has \(items.count) documents, more than the \(Self.maxDocuments) accepted")
            }
            var documents: [Document] = []
            for (index, document) in items.enumerated() {
                documents.append(try Document(document, context: "documents[\(index)]", limits: limits))
            }
            self.documents = documents
        } else {
            documents = []
        }
    }

    public init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        if let response = Self.commonForm(bytes, limits: limits) {
            self = response
            return
        }
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        try self.init(item, limits: limits)
    }

    private init(version: String, documents: [Document], status: Int64) {
        self.version = version
        self.documents = documents
        self.status = status
    }

    /// The DeviceResponse that spans all of `bytes`, read in place when it has
    /// the form wallets send; nil for anything else, which the general reader
    /// (`CBORDecoder`, then `init(_:)`) reads or refuses with the precise reason.
    public static func commonForm(_ bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) -> DeviceResponse? {
        guard var cursor = CBORCursor(bytes, limits: limits), let response = read(&cursor, depth: 0), cursor.isAtEnd else { return nil }
        return response
    }

    /// The structure down to each IssuerSignedItem's `#6.24(bstr)` is read in
    /// place (building it as a tree, then walking the tree, costs more than
    /// reading the items themselves); issuerAuth and deviceSigned, small and
    /// read by code that takes items, are decoded as items. Every part is read
    /// by the code the general reader uses, so what this accepts that reader
    /// accepts alike; the cursor answers nil for any form it does not take.
    /// `depth` is the response's nesting in the input, for the decoder's limit.
    static func read(_ cursor: inout CBORCursor, depth: Int) -> DeviceResponse? {
        // The hand-read levels go nine below the response; a tighter depth limit is the general reader's to apply.
        guard cursor.limits.maxDepth > depth + 10, let count = cursor.mapCount() else { return nil }
        var version: String?, status: Int64?, documents: [Document]?
        let wellFormed = cursor.forEachTextKey(count: count, depth: depth + 1) { cursor, key in
            if key.isUTF8("version") {
                guard cursor.readText(once: &version) else { return .refused }
            } else if key.isUTF8("status") {
                guard status == nil, let value = cursor.unsigned(), value <= UInt64(Int64.max) else { return .refused }
                status = Int64(value)
            } else if key.isUTF8("documents") {
                guard documents == nil, let documentCount = cursor.arrayCount(), documentCount <= maxDocuments else { return .refused }
                var read: [Document] = []
                read.reserveCapacity(documentCount)
                for _ in 0..<documentCount {
                    guard let document = Document.read(&cursor, depth: depth + 2) else { return .refused }
                    read.append(document)
                }
                documents = read
            } else {
                return .other
            }
            return .read
        }
        guard wellFormed else { return nil }
        guard let version, let status, version.hasPrefix("1.") else { return nil }
        return DeviceResponse(version: version, documents: documents ?? [], status: status)
    }
}

/// One document of a DeviceResponse.
public struct Document: Sendable {
    public let docType: String
    public let issuerSigned: IssuerSigned
    public let deviceSigned: DeviceSigned?

    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        docType = try structure { () throws(CBORError) in try item.require("docType", in: context).requireText("\(context).docType") }
        let issuer = try structure { () throws(CBORError) in try item.require("issuerSigned", in: context) }
        issuerSigned = try IssuerSigned(issuer, context: "\(context).issuerSigned", limits: limits)
        if let device = item["deviceSigned"] {
            deviceSigned = try DeviceSigned(device, context: "\(context).deviceSigned", limits: limits)
        } else {
            deviceSigned = nil
        }
    }
}

extension Document {
    private init(docType: String, issuerSigned: IssuerSigned, deviceSigned: DeviceSigned?) {
        self.docType = docType
        self.issuerSigned = issuerSigned
        self.deviceSigned = deviceSigned
    }

    /// The document map in place (see `DeviceResponse.read`).
    static func read(_ cursor: inout CBORCursor, depth: Int) -> Document? {
        guard let count = cursor.mapCount() else { return nil }
        var docType: String?, issuerSigned: IssuerSigned?, deviceSigned: DeviceSigned?
        let wellFormed = cursor.forEachTextKey(count: count, depth: depth + 1) { cursor, key in
            if key.isUTF8("docType") {
                guard cursor.readText(once: &docType) else { return .refused }
            } else if key.isUTF8("issuerSigned") {
                guard issuerSigned == nil, let read = IssuerSigned.read(&cursor, depth: depth + 1) else { return .refused }
                issuerSigned = read
            } else if key.isUTF8("deviceSigned") {
                // Context names only errors, and an error here sends the whole response to the general reader.
                guard deviceSigned == nil, let item = cursor.item(depth: depth + 1),
                      let read = try? DeviceSigned(item, context: "deviceSigned", limits: cursor.limits)
                else { return .refused }
                deviceSigned = read
            } else {
                return .other
            }
            return .read
        }
        guard wellFormed else { return nil }
        guard let docType, let issuerSigned else { return nil }
        return Document(docType: docType, issuerSigned: issuerSigned, deviceSigned: deviceSigned)
    }
}

/// `IssuerSigned = {? "nameSpaces": IssuerNameSpaces, "issuerAuth": COSE_Sign1}`.
public struct IssuerSigned: Sendable {
    /// Namespaces in received order, each with its items in received order.
    public let nameSpaces: [(name: String, items: [IssuerSignedItem])]
    public let issuerAuth: COSESign1

    /// Bytes of UTF-8 a namespace or an element identifier may have. ISO
    /// 18013-5's are a few dozen; the names are stored as indexed keys, and
    /// PostgreSQL refuses an index entry past ~2.7 KB.
    public static let maxNameLength = 256

    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let auth = try structure { () throws(CBORError) in try item.require("issuerAuth", in: context) }
        issuerAuth = try COSESign1(auth, context: "\(context).issuerAuth", limits: limits)
        var spaces: [(name: String, items: [IssuerSignedItem])] = []
        if let map = item["nameSpaces"] {
            let entries = try structure { () throws(CBORError) in try map.requireEntries("\(context).nameSpaces") }
            for entry in entries {
                let name = try structure { () throws(CBORError) in try entry.key.requireText("\(context).nameSpaces key") }
                guard name.utf8.count <= Self.maxNameLength else {
                    throw .malformed("\(context).nameSpaces has a namespace longer than \(Self.maxNameLength) bytes")
                }
                let list = try structure { () throws(CBORError) in try entry.value.requireArray("\(context).nameSpaces[\(name)]") }
                var items: [IssuerSignedItem] = []
                items.reserveCapacity(list.count)
                try list.withUnsafeBufferPointer { (elements) throws(MDocError) in
                    for index in elements.indices {
                        items.append(try IssuerSignedItem(elements[index], limits: limits, lazyContext: "\(context).nameSpaces[\(name)][\(index)]"))
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

    private init(nameSpaces: [(name: String, items: [IssuerSignedItem])], issuerAuth: COSESign1) {
        self.nameSpaces = nameSpaces
        self.issuerAuth = issuerAuth
    }

    /// The IssuerSigned map in place (see `DeviceResponse.read`): namespaces
    /// down to each item's `#6.24(bstr)`, whose content IssuerSignedItem reads.
    static func read(_ cursor: inout CBORCursor, depth: Int) -> IssuerSigned? {
        guard let count = cursor.mapCount() else { return nil }
        var issuerAuth: COSESign1?, spaces: [(name: String, items: [IssuerSignedItem])]?
        let wellFormed = cursor.forEachTextKey(count: count, depth: depth + 1) { cursor, key in
            if key.isUTF8("issuerAuth") {
                guard issuerAuth == nil, let item = cursor.item(depth: depth + 1),
                      let auth = try? COSESign1(item, context: "issuerAuth", limits: cursor.limits)
                else { return .refused }
                issuerAuth = auth
            } else if key.isUTF8("nameSpaces") {
                guard spaces == nil, let read = nameSpaces(&cursor) else { return .refused }
                spaces = read
            } else {
                return .other
            }
            return .read
        }
        guard wellFormed else { return nil }
        guard let issuerAuth else { return nil }
        return IssuerSigned(nameSpaces: spaces ?? [], issuerAuth: issuerAuth)
    }

    /// `{+ tstr => [+ #6.24(bstr)]}`; a namespace written twice is a duplicate
    /// key (by bytes, as the decoder compares keys).
    private static func nameSpaces(_ cursor: inout CBORCursor) -> [(name: String, items: [IssuerSignedItem])]? {
        guard let count = cursor.mapCount() else { return nil }
        var spaces: [(name: String, items: [IssuerSignedItem])] = []
        spaces.reserveCapacity(min(count, CBORDecoder.maxReservation))
        var names = TextKeySet()
        for _ in 0..<count {
            guard let name = cursor.textBytes(), name.count <= maxNameLength, names.insert(name), let itemCount = cursor.arrayCount() else { return nil }
            var items: [IssuerSignedItem] = []
            items.reserveCapacity(min(itemCount, CBORDecoder.maxReservation))
            for _ in 0..<itemCount {
                let start = cursor.position
                guard cursor.tag() == 24, let content = cursor.bytes(),
                      let item = try? IssuerSignedItem(taggedBytes: cursor.input[start..<cursor.position], content: content, limits: cursor.limits, lazyContext: "")
                else { return nil }
                items.append(item)
            }
            spaces.append((String(decoding: name, as: UTF8.self), items))
        }
        return spaces
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

    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        try self.init(item, limits: limits, lazyContext: context)
    }

    /// `context` names the item in errors and is built only for one: a
    /// document discloses dozens of items and almost never has an error.
    init(_ item: CBORItem, limits: CBORDecoder.Limits, lazyContext context: @autoclosure () -> String) throws(MDocError) {
        guard let (tag, wrapped) = item.tagged, tag == 24, let content = wrapped.bytes else {
            throw MDocError(CBORError.unexpectedType(expected: "#6.24(bstr)", context: context()))
        }
        try self.init(taggedBytes: item.encoded, content: content, limits: limits, lazyContext: context())
    }

    /// From the received `#6.24(bstr)` and that bstr's content.
    init(
        taggedBytes: ArraySlice<UInt8>, content: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default,
        lazyContext context: @autoclosure () -> String, commonForm: Bool = true
    ) throws(MDocError) {
        self.taggedBytes = taggedBytes
        if commonForm, let fields = Self.commonForm(content, limits: limits), fields.elementIdentifier.utf8.count <= IssuerSigned.maxNameLength {
            digestID = fields.digestID
            random = fields.random
            elementIdentifier = fields.elementIdentifier
            elementValue = fields.elementValue
            return
        }
        let inner = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(content) }
        let entries = inner.entries ?? []
        // One pass over the four entries, noting where each field is; fields
        // are then read in place. Through the buffer entries are borrowed:
        // subscripting the array would copy an entry per comparison.
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
        guard identifier.utf8.count <= IssuerSigned.maxNameLength else {
            throw .malformed("\(context()): elementIdentifier is longer than \(IssuerSigned.maxNameLength) bytes")
        }
        self.elementIdentifier = identifier
        guard let elementValue else { throw MDocError(CBORError.missingKey("elementValue", context: context())) }
        self.elementValue = entries[elementValue].value
    }

    /// The general path alone, without the common form: for the differential
    /// fuzz target (Fuzz/parsers.swift), which checks that both read alike.
    public init(generalTaggedBytes taggedBytes: ArraySlice<UInt8>, content: ArraySlice<UInt8>) throws(MDocError) {
        try self.init(taggedBytes: taggedBytes, content: content, lazyContext: "IssuerSignedItem", commonForm: false)
    }

    private struct Fields {
        let digestID: UInt64
        let random: ArraySlice<UInt8>
        let elementIdentifier: String
        let elementValue: CBORItem
    }

    /// The form nearly every issuer writes — a definite map of exactly the
    /// four fields with text keys, none twice, nothing after — read in place
    /// (building the map, its entries, keys and duplicate check would be a
    /// large part of reading an item): digestID, random and elementIdentifier by the
    /// cursor, only elementValue by the decoder, the items counted as one
    /// structure. Anything else is nil, and the general path reads it or
    /// rejects it with the precise reason.
    private static func commonForm(_ content: ArraySlice<UInt8>, limits: CBORDecoder.Limits) -> Fields? {
        guard var cursor = CBORCursor(content, limits: limits), cursor.mapCount() == 4 else { return nil }
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
                guard cursor.readText(once: &identifier) else { return nil }
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
    /// deviceAuth held both a deviceSignature and a deviceMac. ISO 18013-5
    /// allows exactly one; the device check refuses the document (the other
    /// one is not read: which of two the device meant is not the verifier's guess).
    public let hasBothAuthentications: Bool

    public enum Authentication: Sendable {
        case signature(COSESign1)
        case mac(COSEMac0)
    }

    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let spaces = try structure { () throws(CBORError) in try item.require("nameSpaces", in: context) }
        nameSpacesBytes = spaces.encoded
        let decoded = try structure { () throws(CBORError) in try spaces.decodeEmbedded("\(context).nameSpaces", limits: limits) }
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
        hasBothAuthentications = auth["deviceSignature"] != nil && auth["deviceMac"] != nil
        if let signature = auth["deviceSignature"] {
            authentication = .signature(try COSESign1(signature, context: "\(context).deviceSignature", limits: limits))
        } else if let mac = auth["deviceMac"] {
            authentication = .mac(try COSEMac0(mac, context: "\(context).deviceMac", limits: limits))
        } else {
            throw .malformed("\(context).deviceAuth has neither deviceSignature nor deviceMac")
        }
    }
}

extension CBORCursor {
    /// A field of the common form that is text and stands once in its map:
    /// false when `field` was already read or the value is not text.
    mutating func readText(once field: inout String?) -> Bool {
        guard field == nil, let text = text() else { return false }
        field = text
        return true
    }
}
