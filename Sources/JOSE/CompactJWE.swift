import Crypto
import JSON

/// A JWE in compact serialization (RFC 7516 §7.1) of the one form OpenID4VP
/// responses use (`response_mode` `dc_api.jwt`, HAIP): key agreement
/// `ECDH-ES` in direct mode on P-256, content encryption `A128GCM` or
/// `A256GCM`. Every other algorithm, a compressed (`zip`) or nested
/// (`cty` JWT) token, critical extensions and keys carried by reference
/// are refused, so that what decrypts is always exactly what was sealed
/// to Veridoc's key.
public struct CompactJWE: Sendable {
    public enum ContentEncryption: String, Sendable, CaseIterable {
        case a128gcm = "A128GCM"
        case a256gcm = "A256GCM"

        var keyByteCount: Int { self == .a128gcm ? 16 : 32 }
    }

    /// The key management algorithm, the only one accepted: the JWK a
    /// verifier publishes names it, and RFC 7516 has the JWE name it again.
    public static let keyAgreement = "ECDH-ES"
    /// The longest protected header accepted, as base64url text: a real one
    /// (alg, enc, kid, epk, apu, apv) is a few hundred bytes.
    public static let maxHeaderBytes = 4096
    public static let maxKeyIDBytes = 256
    /// What the header may hold besides alg, enc and epk, which it must.
    static let optionalMembers: Set<String> = ["kid", "apu", "apv", "typ", "cty"]

    public let encryption: ContentEncryption
    /// The sender's ephemeral key (`epk`).
    public let senderKey: PublicKey
    /// `kid`: which of the verifier's keys the wallet encrypted to.
    public let keyID: String?
    let partyUInfo: [UInt8]
    let partyVInfo: [UInt8]
    /// The additional authenticated data: the protected header's base64url text.
    let headerSegment: [UInt8]
    let initializationVector: [UInt8]
    let ciphertextAndTag: [UInt8]

    /// Reads the five segments and the protected header; nothing is decrypted yet.
    public init(compact: String) throws(JOSEError) {
        // At most six pieces: a text of dots must not become millions of substrings.
        let segments = compact.utf8.split(separator: UInt8(ascii: "."), maxSplits: 5, omittingEmptySubsequences: false)
        guard segments.count == 5 else {
            throw .malformed(segments.count == 3 ? "the response is a JWS, not a JWE (nested or unencrypted tokens are refused)"
                                                 : "a compact JWE has five segments, this has \(segments.count > 5 ? "more" : String(segments.count))")
        }
        guard segments[0].count <= Self.maxHeaderBytes else { throw .malformed("the JWE protected header is longer than \(Self.maxHeaderBytes) bytes") }
        func decode(_ index: Int, _ name: String) throws(JOSEError) -> [UInt8] {
            guard let bytes = Base64.decodeURLUnpadded(String(decoding: segments[index], as: UTF8.self)) else {
                throw .malformed("the JWE \(name) is not base64url without padding")
            }
            return bytes
        }
        let headerBytes = try decode(0, "protected header")
        guard try decode(1, "encrypted key").isEmpty else { throw .unsupported("ECDH-ES in direct mode has an empty encrypted key segment") }
        initializationVector = try decode(2, "initialization vector")
        let ciphertext = try decode(3, "ciphertext")
        let tag = try decode(4, "authentication tag")
        guard initializationVector.count == 12 else { throw .malformed("the JWE initialization vector is not 96 bits") }
        guard tag.count == 16 else { throw .malformed("the JWE authentication tag is not 128 bits") }
        headerSegment = Array(segments[0])
        ciphertextAndTag = ciphertext + tag

        let header: JSONObject
        do {
            guard let object = try JSONParser(maxDepth: 3, maxMembers: 16).parse(headerBytes).objectValue else { throw JOSEError.malformed("") }
            header = object
        } catch {
            throw .malformed("the JWE protected header is not a JSON object of at most 16 members")
        }
        for name in header.keys where !["alg", "enc", "epk"].contains(name) && !Self.optionalMembers.contains(name) {
            // zip, crit, jku, jwk, x5u, x5c and the rest: each changes what the
            // token means or where its key comes from.
            throw .unsupported(name == "zip" ? "compressed JWEs (zip) are refused" : "the JWE header member \(Self.printable(name)) is not accepted")
        }
        guard header["alg"]?.stringValue == Self.keyAgreement else { throw .unsupported("the JWE alg is not ECDH-ES") }
        guard let enc = header["enc"]?.stringValue.flatMap(ContentEncryption.init(rawValue:)) else {
            throw .unsupported("the JWE enc is not one of A128GCM, A256GCM")
        }
        if let cty = header["cty"] {
            // RFC 7515 §4.1.10: "JWT" and "application/jwt" are one media type.
            guard let text = cty.stringValue, !["JWT", "APPLICATION/JWT"].contains(text.uppercased()) else {
                throw .unsupported("nested JWTs (cty JWT) are refused")
            }
        }
        if let typ = header["typ"], typ.stringValue == nil { throw .malformed("the JWE typ is not a string") }
        encryption = enc
        guard let epk = header["epk"]?.objectValue else { throw .malformed("the JWE header has no epk object") }
        senderKey = try ECJWK.publicKey(from: epk, context: "the JWE epk")
        if let kid = header["kid"] {
            guard let text = kid.stringValue, !text.isEmpty, text.utf8.count <= Self.maxKeyIDBytes else {
                throw .malformed("the JWE kid is not a non-empty string of at most \(Self.maxKeyIDBytes) bytes")
            }
            keyID = text
        } else {
            keyID = nil
        }
        func party(_ name: String) throws(JOSEError) -> [UInt8] {
            guard let value = header[name] else { return [] }
            guard let bytes = value.stringValue.flatMap(Base64.decodeURLUnpadded) else { throw .malformed("the JWE \(name) is not base64url") }
            return bytes
        }
        partyUInfo = try party("apu")
        partyVInfo = try party("apv")
    }

    /// The plaintext, if the JWE was sealed to `key` and is unaltered.
    public func decrypt(with key: PrivateKey) throws(JOSEError) -> [UInt8] {
        guard key.type == .ec(.p256) else { throw .unsupported("the recipient key is not P-256") }
        let contentKey: [UInt8]
        do {
            let shared = try key.sharedSecret(with: senderKey)
            contentKey = ConcatKDF.derive(sharedSecret: shared, algorithmID: encryption.rawValue, partyUInfo: partyUInfo,
                                          partyVInfo: partyVInfo, keyByteCount: encryption.keyByteCount)
        } catch {
            throw .decryptionFailed
        }
        do {
            return try AESGCM.open(ciphertextAndTag, key: contentKey, nonce: initializationVector, authenticating: headerSegment)
        } catch {
            throw .decryptionFailed
        }
    }

    /// Seals `plaintext` to `recipient` (the test issuer's wallet, fixtures):
    /// a fresh ephemeral key unless one is given, a fresh IV.
    public static func seal(_ plaintext: [UInt8], to recipient: PublicKey, keyID: String?, encryption: ContentEncryption = .a128gcm,
                            partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [], ephemeral: PrivateKey? = nil) throws(CryptoError) -> String {
        let sender = if let ephemeral { ephemeral } else { try PrivateKey.generate(curve: .p256) }
        guard let epk = ECJWK.object(for: sender.publicKey) else { throw .unsupported("JWE sender keys are P-256") }
        var header: JSONObject = ["alg": .string(keyAgreement), "enc": .string(encryption.rawValue)]
        if let keyID { _ = header.append("kid", .string(keyID)) }
        _ = header.append("epk", .object(epk))
        if !partyUInfo.isEmpty { _ = header.append("apu", .string(Base64.encodeURL(partyUInfo))) }
        if !partyVInfo.isEmpty { _ = header.append("apv", .string(Base64.encodeURL(partyVInfo))) }
        let headerSegment = Base64.encodeURL(JSONValue.object(header).jsonBytes(keyOrder: .insertion))
        let contentKey = ConcatKDF.derive(sharedSecret: try sender.sharedSecret(with: recipient), algorithmID: encryption.rawValue,
                                          partyUInfo: partyUInfo, partyVInfo: partyVInfo, keyByteCount: encryption.keyByteCount)
        let iv = secureRandomBytes(12)
        let sealed = try AESGCM.seal(plaintext, key: contentKey, nonce: iv, authenticating: Array(headerSegment.utf8))
        let tagStart = sealed.count - 16
        return [headerSegment, "", Base64.encodeURL(iv), Base64.encodeURL(sealed[..<tagStart]), Base64.encodeURL(sealed[tagStart...])].joined(separator: ".")
    }

    /// A header member's name in a detail: short printable ASCII, else a placeholder.
    static func printable(_ name: String) -> String {
        name.utf8.count <= 16 && name.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") }) ? "\"\(name)\"" : "(an unprintable name)"
    }
}
