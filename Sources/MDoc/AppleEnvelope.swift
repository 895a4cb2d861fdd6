import CBOR
import Crypto

/// The `APPLE-HPKE-v1` envelope of `PKIdentityDocument.encryptedData`:
/// `{"algorithm", "params": {"mode", "pkEm", "pkRHash", "infoHash"}, "data"}`.
public struct AppleEnvelope: Sendable {
    public static let algorithmName = "APPLE-HPKE-v1"

    /// The HPKE encapsulated key (an uncompressed P-256 point).
    public let ephemeralPublicKey: [UInt8]
    /// SHA-256 of the recipient's uncompressed public key: names the merchant key.
    public let recipientKeyHash: [UInt8]
    /// SHA-256 of the SessionTranscript the device used as HPKE info.
    public let infoHash: [UInt8]
    public let ciphertext: ArraySlice<UInt8>

    public init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        guard item.entries != nil else { throw .malformed("Apple envelope is not a CBOR map") }
        let algorithm = try structure { () throws(CBORError) in try item.require("algorithm", in: "envelope").requireText("envelope.algorithm") }
        guard algorithm == Self.algorithmName else { throw .unsupported("envelope algorithm \(algorithm)") }
        let params = try structure { () throws(CBORError) in try item.require("params", in: "envelope") }
        let mode = try structure { () throws(CBORError) in try params.require("mode", in: "envelope.params").requireInt("envelope.params.mode") }
        guard mode == 0 else { throw .unsupported("HPKE mode \(mode)") }
        ephemeralPublicKey = Array(try structure { () throws(CBORError) in try params.require("pkEm", in: "envelope.params").requireBytes("pkEm") })
        recipientKeyHash = Array(try structure { () throws(CBORError) in try params.require("pkRHash", in: "envelope.params").requireBytes("pkRHash") })
        infoHash = Array(try structure { () throws(CBORError) in try params.require("infoHash", in: "envelope.params").requireBytes("infoHash") })
        guard recipientKeyHash.count == 32, infoHash.count == 32 else { throw .malformed("pkRHash and infoHash are 32 bytes") }
        ciphertext = try structure { () throws(CBORError) in try item.require("data", in: "envelope").requireBytes("envelope.data") }
    }

    /// The DeviceResponse inside the decrypted `{"identity": DeviceResponse}`, as a slice of `plaintext`.
    public static func identity(inPlaintext plaintext: [UInt8], limits: CBORDecoder.Limits = .default) throws(MDocError) -> CBORItem {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(plaintext) }
        return try structure { () throws(CBORError) in try item.require("identity", in: "Apple plaintext") }
    }

    /// The DeviceResponse of the decrypted `{"identity": DeviceResponse}`: read
    /// in place when both have the common form (see `DeviceResponse.read`),
    /// otherwise through `identity(inPlaintext:limits:)` and the general reader,
    /// which decide what is refused and why.
    public static func deviceResponse(inPlaintext plaintext: [UInt8], limits: CBORDecoder.Limits = .default) throws(MDocError) -> DeviceResponse {
        if var cursor = CBORCursor(plaintext[...], limits: limits), cursor.mapCount() == 1,
           cursor.textBytes()?.isUTF8("identity") == true,
           let response = DeviceResponse.read(&cursor, depth: 1), cursor.isAtEnd {
            return response
        }
        return try DeviceResponse(identity(inPlaintext: plaintext, limits: limits), limits: limits)
    }

    /// Seals `{"identity": deviceResponse}` to `recipient` (fixtures, load generation).
    public static func seal(deviceResponse: [UInt8], transcript: SessionTranscript, recipient: PublicKey) throws(CryptoError) -> [UInt8] {
        let plaintext = CBOR.map([.init("identity", .preEncoded(deviceResponse))]).encoded()
        let sealed = try HPKE.seal(plaintext, info: transcript.encoded, recipient: recipient)
        return CBOR.map([
            .init("algorithm", .text(algorithmName)),
            .init("params", .map([
                .init("mode", 0), .init("pkEm", .bytes(sealed.encapsulatedKey)),
                .init("pkRHash", .bytes(recipientKeyHash(of: recipient))), .init("infoHash", .bytes(sha256(transcript.encoded))),
            ])),
            .init("data", .bytes(sealed.ciphertext)),
        ]).encoded()
    }

    /// `pkRHash`: SHA-256 of the uncompressed recipient public key.
    public static func recipientKeyHash(of key: PublicKey) -> [UInt8] {
        sha256(key.uncompressedPoint ?? [])
    }
}
