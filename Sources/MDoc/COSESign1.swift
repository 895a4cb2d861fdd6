import CBOR
import Crypto

/// A COSE_Sign1 message (RFC 9052 §4.2), tagged 18 or untagged, holding the
/// received bytes of its protected header and payload.
public struct COSESign1: Sendable {
    /// The protected header exactly as received (the content of its bstr).
    public let protectedBytes: ArraySlice<UInt8>
    public let protectedHeader: CBORItem?
    public let unprotectedHeader: CBORItem
    /// nil when the payload is detached.
    public let payload: ArraySlice<UInt8>?
    public let signature: ArraySlice<UInt8>

    /// `limits` bound the protected header's decode (the event's budget, where it has one).
    public init(_ item: CBORItem, context: String, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        var message = item
        if let (tag, inner) = item.tagged {
            guard tag == 18 else { throw .malformed("\(context): tag \(tag) is not COSE_Sign1") }
            message = inner
        }
        guard let parts = message.array, parts.count == 4 else {
            throw .malformed("\(context): COSE_Sign1 is an array of 4")
        }
        let protectedBytes = try structure { () throws(CBORError) in try parts[0].requireBytes("\(context) protected header") }
        self.protectedBytes = protectedBytes
        protectedHeader = protectedBytes.isEmpty ? nil : try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(protectedBytes) }
        if let protectedHeader, protectedHeader.entries == nil {
            throw .malformed("\(context): protected header is not a map")
        }
        guard parts[1].entries != nil else { throw .malformed("\(context): unprotected header is not a map") }
        unprotectedHeader = parts[1]
        if parts[2].isNull {
            payload = nil
        } else {
            payload = try structure { () throws(CBORError) in try parts[2].requireBytes("\(context) payload") }
        }
        signature = try structure { () throws(CBORError) in try parts[3].requireBytes("\(context) signature") }
    }

    /// The `alg` header. It must be protected (RFC 9052 §3.1): an algorithm an
    /// attacker can rewrite is no algorithm.
    /// The `crit` header (RFC 9052 §3.1) is checked here too: every use of
    /// the signature asks for its algorithm first.
    public func algorithm(context: String) throws(MDocError) -> COSESignatureAlgorithm {
        try COSEHeader.checkCritical(protected: protectedHeader, unprotected: unprotectedHeader, context: context)
        guard let value = protectedHeader?[label: COSEHeader.algorithm] else {
            throw .malformed("\(context): no algorithm in the protected header")
        }
        guard let number = value.int else { throw .unsupported("\(context): non-integer COSE algorithm") }
        return try COSESignatureAlgorithm(coseValue: number)
    }

    /// The most certificates an `x5chain` may hold. ISO 18013-5 chains are a
    /// document signer issued by the IACA (one certificate, two with an
    /// intermediate); distinct certificates each cost a parse and a place in
    /// the certificate cache, so a header of thousands is refused before any
    /// is read.
    public static let maxChainCertificates = 8

    /// Whether an `x5chain` header (label 33) is present, protected or unprotected, whatever it holds.
    public var hasX5chainHeader: Bool {
        protectedHeader?[label: COSEHeader.x5chain] != nil || unprotectedHeader[label: COSEHeader.x5chain] != nil
    }

    /// The certificates of the `x5chain` header (label 33), leaf first: one
    /// bstr or an array of them, protected or unprotected. Empty when absent.
    public func x5chain(context: String) throws(MDocError) -> [Certificate] {
        guard let header = protectedHeader?[label: COSEHeader.x5chain] ?? unprotectedHeader[label: COSEHeader.x5chain] else {
            return []
        }
        let encoded: [ArraySlice<UInt8>]
        if let single = header.bytes {
            encoded = [single]
        } else if let array = header.array, !array.isEmpty, array.allSatisfy({ $0.bytes != nil }) {
            encoded = array.map { $0.bytes! }
        } else {
            throw .malformed("\(context): x5chain is neither a bstr nor an array of bstr")
        }
        guard encoded.count <= Self.maxChainCertificates else {
            throw .malformed("\(context): x5chain holds \(encoded.count) certificates, more than the \(Self.maxChainCertificates) accepted")
        }
        var certificates: [Certificate] = []
        for (index, der) in encoded.enumerated() {
            do {
                certificates.append(try Certificate.cached(der: der))
            } catch {
                throw .malformed("\(context): x5chain certificate \(index) is not DER X.509")
            }
        }
        return certificates
    }

    /// `Sig_structure = ["Signature1", protected, external_aad, payload]`.
    public func toBeSigned(payload detached: ArraySlice<UInt8>? = nil, externalAAD: [UInt8] = []) -> [UInt8] {
        let signedPayload = detached ?? payload ?? []
        // The same bytes as encoding the CBOR array, without copying the payload into a value first.
        var out: [UInt8] = []
        out.reserveCapacity(32 + protectedBytes.count + externalAAD.count + signedPayload.count)
        CBOR.appendHead(major: 4, 4, to: &out)
        CBOR.text("Signature1").encode(into: &out)
        CBOR.appendHead(major: 2, UInt64(protectedBytes.count), to: &out)
        out.append(contentsOf: protectedBytes)
        CBOR.appendHead(major: 2, UInt64(externalAAD.count), to: &out)
        out.append(contentsOf: externalAAD)
        CBOR.appendHead(major: 2, UInt64(signedPayload.count), to: &out)
        out.append(contentsOf: signedPayload)
        return out
    }

    /// Verifies the signature with `key` over the attached payload or `detached`.
    /// False when the algorithm does not belong to the key type.
    public func isValidSignature(algorithm: COSESignatureAlgorithm, key: PublicKey, payload detached: ArraySlice<UInt8>? = nil) -> Bool {
        guard key.type == algorithm.keyType else { return false }
        return key.isValidSignature(Array(signature), for: toBeSigned(payload: detached), hash: algorithm.hash)
    }

    /// Builds and signs a COSE_Sign1 (fixtures, the demo issuer).
    public static func sign(
        payload: [UInt8]?, detachedPayload: [UInt8]? = nil, key: PrivateKey, algorithm: COSESignatureAlgorithm,
        unprotected: [CBOR.MapEntry] = [], tagged: Bool = false
    ) throws(CryptoError) -> CBOR {
        let protectedBytes = CBOR.map([.init(.int(COSEHeader.algorithm), .int(algorithm.rawValue))]).encoded()
        let toBeSigned = CBOR.array([
            "Signature1", .bytes(protectedBytes), .bytes([]), .bytes(payload ?? detachedPayload ?? []),
        ]).encoded()
        let signature = try key.signature(for: toBeSigned, hash: algorithm.hash)
        let message = CBOR.array([.bytes(protectedBytes), .map(unprotected), payload.map(CBOR.bytes) ?? .null, .bytes(signature)])
        return tagged ? .tagged(18, message) : message
    }
}
