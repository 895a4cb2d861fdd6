import CBOR
import Crypto
import Foundation

/// ISO/IEC 18013-5 §9.1.2.4 MobileSecurityObject, the issuer-signed payload.
public struct MobileSecurityObject: Sendable {
    public let version: String
    public let digestAlgorithm: HashAlgorithm
    /// namespace → digestID → digest.
    public let valueDigests: [String: [UInt64: ArraySlice<UInt8>]]
    public let deviceKey: PublicKey
    public let docType: String
    public let signed: Date
    public let validFrom: Date
    public let validUntil: Date

    /// Parses the issuerAuth payload, `#6.24(bstr .cbor MobileSecurityObject)`.
    /// Some issuers omit the tag-24 wrapper; the MSO map is accepted bare too.
    public init(payload: ArraySlice<UInt8>) throws(MDocError) {
        let outer = try structure { () throws(CBORError) in try CBORDecoder().decode(payload) }
        let mso = outer.tagged?.tag == 24 ? try structure { () throws(CBORError) in try outer.decodeEmbedded("MSO") } : outer
        guard mso.entries != nil else { throw .malformed("MSO is not a map") }
        version = try structure { () throws(CBORError) in try mso.require("version", in: "MSO").requireText("MSO.version") }
        let algorithm = try structure { () throws(CBORError) in try mso.require("digestAlgorithm", in: "MSO").requireText("MSO.digestAlgorithm") }
        guard let digestAlgorithm = HashAlgorithm(rawValue: algorithm) else { throw .unsupported("MSO digest algorithm \(algorithm)") }
        self.digestAlgorithm = digestAlgorithm
        docType = try structure { () throws(CBORError) in try mso.require("docType", in: "MSO").requireText("MSO.docType") }

        let spaces = try structure { () throws(CBORError) in try mso.require("valueDigests", in: "MSO").requireEntries("MSO.valueDigests") }
        var digests: [String: [UInt64: ArraySlice<UInt8>]] = [:]
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
            digests[name] = byID
        }
        valueDigests = digests

        let keyInfo = try structure { () throws(CBORError) in try mso.require("deviceKeyInfo", in: "MSO") }
        let key = try structure { () throws(CBORError) in try keyInfo.require("deviceKey", in: "MSO.deviceKeyInfo") }
        deviceKey = try COSEKey.publicKey(from: key, context: "MSO.deviceKeyInfo.deviceKey")

        let validity = try structure { () throws(CBORError) in try mso.require("validityInfo", in: "MSO") }
        signed = try Self.date(validity, "signed")
        validFrom = try Self.date(validity, "validFrom")
        validUntil = try Self.date(validity, "validUntil")
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
