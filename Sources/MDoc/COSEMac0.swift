import CBOR
import Crypto

/// A COSE_Mac0 message (RFC 9052 §6.2) as ISO 18013-5 uses it for `deviceMac`:
/// HMAC 256/256 (alg 5) with a detached payload.
public struct COSEMac0: Sendable {
    public let protectedBytes: ArraySlice<UInt8>
    public let protectedHeader: CBORItem?
    public let unprotectedHeader: CBORItem
    public let payload: ArraySlice<UInt8>?
    public let tag: ArraySlice<UInt8>

    static let hmac256: Int64 = 5

    /// `limits` bound the protected header's decode (the event's budget, where it has one).
    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        var message = item
        if let (tagNumber, inner) = item.tagged {
            guard tagNumber == 17 else { throw .malformed("\(context): tag \(tagNumber) is not COSE_Mac0") }
            message = inner
        }
        guard let parts = message.array, parts.count == 4, parts[1].entries != nil else {
            throw .malformed("\(context): COSE_Mac0 is an array of 4")
        }
        let protectedBytes = try structure { () throws(CBORError) in try parts[0].requireBytes("\(context) protected header") }
        self.protectedBytes = protectedBytes
        protectedHeader = protectedBytes.isEmpty ? nil : try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(protectedBytes) }
        unprotectedHeader = parts[1]
        payload = parts[2].isNull ? nil : try structure { () throws(CBORError) in try parts[2].requireBytes("\(context) payload") }
        tag = try structure { () throws(CBORError) in try parts[3].requireBytes("\(context) tag") }
    }

    /// The algorithm, and the `crit` header (RFC 9052 §3.1) with it.
    public func checkAlgorithm(context: String) throws(MDocError) {
        try COSEHeader.checkCritical(protected: protectedHeader, unprotected: unprotectedHeader, context: context)
        guard let value = protectedHeader?[label: COSEHeader.algorithm]?.int else {
            throw .malformed("\(context): no algorithm in the protected header")
        }
        guard value == Self.hmac256 else { throw .unsupported("\(context): MAC algorithm \(value)") }
    }

    /// `MAC_structure = ["MAC0", protected, external_aad, payload]`.
    public func toBeMaced(payload detached: ArraySlice<UInt8>?) -> [UInt8] {
        CBOR.array(["MAC0", .bytes(Array(protectedBytes)), .bytes([]), .bytes(Array(detached ?? payload ?? []))]).encoded()
    }

    public func isValid(key: [UInt8], payload detached: ArraySlice<UInt8>?) -> Bool {
        HMAC.isValid(Array(tag), .sha256, key: key, data: toBeMaced(payload: detached))
    }

    /// Builds a detached COSE_Mac0 (fixtures).
    public static func mac(payload: [UInt8], key: [UInt8]) -> CBOR {
        let protectedBytes = CBOR.map([.init(.int(COSEHeader.algorithm), .int(hmac256))]).encoded()
        let structure = CBOR.array(["MAC0", .bytes(protectedBytes), .bytes([]), .bytes(payload)]).encoded()
        return .array([.bytes(protectedBytes), .map([]), .null, .bytes(HMAC.authenticationCode(.sha256, key: key, data: structure))])
    }
}
