import CBOR
import Crypto
import Foundation

/// ISO/IEC 18013-5 §9.1.2.4 MobileSecurityObject, the issuer-signed payload.
public struct MobileSecurityObject: Sendable {
    public let version: String
    public let digestAlgorithm: HashAlgorithm
    /// namespace → digestID → digest. Namespaces are keyed by their bytes:
    /// a lookalike spelling of a signed namespace finds nothing.
    public let valueDigests: [Identifier: [UInt64: ArraySlice<UInt8>]]
    public let deviceKey: PublicKey
    /// The device key's declared `alg`, when its COSE_Key names one.
    public let deviceKeyAlgorithm: Int64?
    public let docType: String
    public let signed: Date
    public let validFrom: Date
    public let validUntil: Date
    /// Where the issuer publishes this credential's revocation status; nil when the MSO has no `status`.
    public let status: MSOStatus?

    /// Parses the issuerAuth payload, `#6.24(bstr .cbor MobileSecurityObject)`.
    /// Some issuers omit the tag-24 wrapper; the MSO map is accepted bare too.
    /// `limits` bound its decodes (the event's budget, where it has one).
    public init(payload: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        if let mso = Self.commonForm(payload, limits: limits) {
            self = mso
            return
        }
        try self.init(general: payload, limits: limits)
    }

    /// The general reader: a full `CBORItem` tree, then the fields. It alone
    /// decides what is refused, and why. Public for the differential fuzz
    /// target (Fuzz/parsers.swift), which reads every payload both ways.
    public init(general payload: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let outer = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(payload) }
        let mso = outer.tagged?.tag == 24 ? try structure { () throws(CBORError) in try outer.decodeEmbedded("MSO", limits: limits) } : outer
        guard mso.entries != nil else { throw .malformed("MSO is not a map") }
        version = try structure { () throws(CBORError) in try mso.require("version", in: "MSO").requireText("MSO.version") }
        let algorithm = try structure { () throws(CBORError) in try mso.require("digestAlgorithm", in: "MSO").requireText("MSO.digestAlgorithm") }
        guard let digestAlgorithm = HashAlgorithm(rawValue: algorithm) else { throw .unsupported("MSO digest algorithm \(algorithm)") }
        self.digestAlgorithm = digestAlgorithm
        docType = try structure { () throws(CBORError) in try mso.require("docType", in: "MSO").requireText("MSO.docType") }

        let spaces = try structure { () throws(CBORError) in try mso.require("valueDigests", in: "MSO").requireEntries("MSO.valueDigests") }
        var digests: [Identifier: [UInt64: ArraySlice<UInt8>]] = [:]
        digests.reserveCapacity(spaces.count)
        for space in spaces {
            let name = try structure { () throws(CBORError) in try space.key.requireText("MSO.valueDigests key") }
            let entries = try structure { () throws(CBORError) in try space.value.requireEntries("MSO.valueDigests[\(name)]") }
            var byID: [UInt64: ArraySlice<UInt8>] = [:]
            byID.reserveCapacity(entries.count)
            for entry in entries {
                guard let id = entry.key.unsigned, let digest = entry.value.bytes else {
                    throw .malformed("MSO.valueDigests[\(name)] entries map a digestID to a bstr")
                }
                byID[id] = digest
            }
            digests[Identifier(name)] = byID
        }
        valueDigests = digests

        let keyInfo = try structure { () throws(CBORError) in try mso.require("deviceKeyInfo", in: "MSO") }
        let key = try structure { () throws(CBORError) in try keyInfo.require("deviceKey", in: "MSO.deviceKeyInfo") }
        deviceKey = try COSEKey.publicKey(from: key, context: "MSO.deviceKeyInfo.deviceKey")
        deviceKeyAlgorithm = try COSEKey.declaredAlgorithm(of: key, context: "MSO.deviceKeyInfo.deviceKey")

        let validity = try structure { () throws(CBORError) in try mso.require("validityInfo", in: "MSO") }
        signed = try Self.date(validity, "signed")
        validFrom = try Self.date(validity, "validFrom")
        validUntil = try Self.date(validity, "validUntil")
        status = try mso["status"].map { item throws(MDocError) in try MSOStatus(item) }
    }

    private init(
        version: String, digestAlgorithm: HashAlgorithm, valueDigests: [Identifier: [UInt64: ArraySlice<UInt8>]], deviceKey: PublicKey,
        deviceKeyAlgorithm: Int64?, docType: String, signed: Date, validFrom: Date, validUntil: Date, status: MSOStatus?
    ) {
        self.version = version
        self.digestAlgorithm = digestAlgorithm
        self.valueDigests = valueDigests
        self.deviceKey = deviceKey
        self.deviceKeyAlgorithm = deviceKeyAlgorithm
        self.docType = docType
        self.signed = signed
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.status = status
    }

    /// The MSO read in place, in the form issuers write: a definite map with
    /// text keys, its valueDigests (most of the MSO) a definite map of
    /// namespaces to definite maps of digestID to bstr. That part and the
    /// plain fields are read without building a tree; deviceKeyInfo,
    /// validityInfo, status and any other entry are decoded as items and read by the
    /// general code. Anything unusual — an indefinite length, another type, a
    /// duplicate key, a missing field, a bad value, bytes left over — is nil,
    /// and `init(general:)` reads it or refuses it with the precise reason.
    /// So what this accepts, the general reader accepts with the same fields.
    /// Public for the differential fuzz target (Fuzz/parsers.swift).
    public static func commonForm(_ payload: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) -> MobileSecurityObject? {
        guard var outer = CBORCursor(payload, limits: limits) else { return nil }
        var content = payload
        if outer.nextMajor == 6 {
            // `#6.24(bstr)` and nothing after; the map inside is a separate
            // item, its limits counted afresh (as `decodeEmbedded` counts them).
            guard outer.tag() == 24, let embedded = outer.bytes(), outer.isAtEnd else { return nil }
            content = embedded
        }
        guard var cursor = CBORCursor(content, limits: limits), let count = cursor.mapCount() else { return nil }
        var version: String?, algorithm: HashAlgorithm?, docType: String?
        var digests: [Identifier: [UInt64: ArraySlice<UInt8>]]?
        var deviceKey: PublicKey?, deviceKeyAlgorithm: Int64?
        var validity: (signed: Date, validFrom: Date, validUntil: Date)?
        var status: MSOStatus?
        // Keys other than the seven are skipped, a duplicate among them refused as
        // the decoder refuses it (text keys are the same key exactly when their bytes are).
        let wellFormed = cursor.forEachTextKey(count: count, depth: 1) { cursor, key in
            if key.isUTF8("version") {
                guard cursor.readText(once: &version) else { return .refused }
            } else if key.isUTF8("digestAlgorithm") {
                guard algorithm == nil, let text = cursor.text(), let known = HashAlgorithm(rawValue: text) else { return .refused }
                algorithm = known
            } else if key.isUTF8("docType") {
                guard cursor.readText(once: &docType) else { return .refused }
            } else if key.isUTF8("valueDigests") {
                guard digests == nil, let read = valueDigests(&cursor) else { return .refused }
                digests = read
            } else if key.isUTF8("deviceKeyInfo") {
                guard deviceKey == nil, let info = cursor.item(depth: 1),
                      let keyItem = try? info.require("deviceKey", in: "MSO.deviceKeyInfo"),
                      let key = try? COSEKey.publicKey(from: keyItem, context: "MSO.deviceKeyInfo.deviceKey"),
                      // A Result, not try?: an absent alg is a value (nil), a bad one is not.
                      case .success(let declared) = Result(catching: { () throws(MDocError) in
                          try COSEKey.declaredAlgorithm(of: keyItem, context: "MSO.deviceKeyInfo.deviceKey")
                      })
                else { return .refused }
                deviceKey = key
                deviceKeyAlgorithm = declared
            } else if key.isUTF8("validityInfo") {
                guard validity == nil, let info = cursor.item(depth: 1), info.entries != nil,
                      let signed = try? date(info, "signed"), let validFrom = try? date(info, "validFrom"),
                      let validUntil = try? date(info, "validUntil")
                else { return .refused }
                validity = (signed, validFrom, validUntil)
            } else if key.isUTF8("status") {
                guard status == nil, let item = cursor.item(depth: 1), let read = try? MSOStatus(item) else { return .refused }
                status = read
            } else {
                return .other
            }
            return .read
        }
        guard wellFormed else { return nil }
        guard cursor.isAtEnd, let version, let algorithm, let docType, let digests, let deviceKey, let validity else { return nil }
        return MobileSecurityObject(
            version: version, digestAlgorithm: algorithm, valueDigests: digests, deviceKey: deviceKey,
            deviceKeyAlgorithm: deviceKeyAlgorithm, docType: docType,
            signed: validity.signed, validFrom: validity.validFrom, validUntil: validity.validUntil, status: status)
    }

    /// `{* tstr => {* uint => bstr}}` in place. A namespace written twice is
    /// refused (by bytes, as the decoder compares keys); the dictionary is
    /// keyed by bytes, as the general reader keys it.
    private static func valueDigests(_ cursor: inout CBORCursor) -> [Identifier: [UInt64: ArraySlice<UInt8>]]? {
        guard let spaceCount = cursor.mapCount() else { return nil }
        var digests: [Identifier: [UInt64: ArraySlice<UInt8>]] = [:]
        digests.reserveCapacity(min(spaceCount, CBORDecoder.maxReservation))
        var names = TextKeySet()
        for _ in 0..<spaceCount {
            guard let nameBytes = cursor.textBytes(), names.insert(nameBytes), let idCount = cursor.mapCount() else { return nil }
            var byID: [UInt64: ArraySlice<UInt8>] = [:]
            byID.reserveCapacity(min(idCount, CBORDecoder.maxReservation))
            for _ in 0..<idCount {
                // An unsigned key is the same key exactly when its value is, whatever its head's width.
                guard let id = cursor.unsigned(), let digest = cursor.bytes(), byID.updateValue(digest, forKey: id) == nil else { return nil }
            }
            digests[Identifier(String(decoding: nameBytes, as: UTF8.self))] = byID
        }
        return digests
    }

    /// `tdate = #6.0(tstr)`; the untagged string is tolerated, as other verifiers do.
    private static func date(_ validity: CBORItem, _ key: String) throws(MDocError) -> Date {
        guard let item = validity[key] else { throw .malformed("MSO.validityInfo: missing \(key)") }
        let text: String?
        if let (tag, inner) = item.tagged {
            text = tag == 0 ? inner.text : nil
        } else {
            text = item.text
        }
        guard let text, let date = RFC3339.date(from: text) else {
            throw .malformed("MSO.validityInfo.\(key) is not an RFC 3339 tdate")
        }
        return date
    }
}
