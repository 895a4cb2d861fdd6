import Crypto
import Foundation
import JSON
@testable import SessionAPI
import TestSupport
import Testing
import Verification

/// Reader tokens as the Verifier API takes them: checked apart from our own
/// code where it matters (the signature by the `openssl` command, the JSON
/// by Foundation's parser).
@Suite struct ReaderTokenTests {
    static let now = Date(timeIntervalSince1970: 1_796_000_000.75)

    struct Decoded {
        let header: [String: Any]
        let claims: [String: Any]
        let signingInput: String
        let signature: [UInt8]
    }

    static func decode(_ compact: String) throws -> Decoded {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3, "a compact JWS has three parts")
        for part in parts {
            #expect(part.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F },
                    "base64url without padding")
        }
        let bytes = try parts.map { part in try #require(Base64.decodeURL(part), "base64url") }
        let header = try #require(try JSONSerialization.jsonObject(with: Data(bytes[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(bytes[1])) as? [String: Any])
        return Decoded(header: header, claims: claims, signingInput: parts[0] + "." + parts[1], signature: bytes[2])
    }

    @Test func theHeaderAndClaimsAreExactlyApples() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let signer = try ReaderTokenSigner(brandID: "BRAND12345", keyID: "KEY0987654", key: key, lifetime: 120)
        let token = try signer.token(readerInstanceIdentifier: "reader-instance-7", now: Self.now)
        let decoded = try Self.decode(token.compact)
        #expect(decoded.header.count == 3)
        #expect(decoded.header["alg"] as? String == "ES256")
        #expect(decoded.header["kid"] as? String == "KEY0987654")
        #expect(decoded.header["typ"] as? String == "JWT")
        #expect(Set(decoded.claims.keys) == ["iss", "sub", "aud", "iat", "exp"])
        #expect(decoded.claims["iss"] as? String == "BRAND12345")
        #expect(decoded.claims["sub"] as? String == "reader-instance-7")
        #expect(decoded.claims["aud"] as? String == "apple-identityservices-v1")
        #expect(decoded.claims["iat"] as? Int == 1_796_000_000, "NumericDate in whole seconds")
        #expect(decoded.claims["exp"] as? Int == 1_796_000_120)
        #expect(token.expiresAt == Date(timeIntervalSince1970: 1_796_000_120))
        #expect(decoded.signature.count == 64, "ES256 is the raw r‖s, not DER")
    }

    @Test func theLifetimeNeverPassesApplesFiveMinutes() throws {
        let signer = try ReaderTokenSigner(brandID: "B", keyID: "K", key: try PrivateKey.generate(curve: .p256), lifetime: 3_600)
        let claims = try Self.decode(try signer.token(readerInstanceIdentifier: "r", now: Self.now).compact).claims
        let issued = try #require(claims["iat"] as? Int)
        let expires = try #require(claims["exp"] as? Int)
        #expect(expires - issued == 300)
    }

    @Test func onlyAP256KeySigns() throws {
        #expect(throws: CryptoError.self) { try ReaderTokenSigner(brandID: "B", keyID: "K", key: try PrivateKey.generate(curve: .p384)) }
    }

    /// The `openssl` command verifies the signature with the public key alone.
    @Test func opensslVerifiesTheSignature() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let signer = try ReaderTokenSigner(brandID: "B", keyID: "K", key: key)
        let decoded = try Self.decode(try signer.token(readerInstanceIdentifier: "reader", now: Self.now).compact)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reader-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let verdict = try OpenSSLVerify.check(signature: decoded.signature, over: Array(decoded.signingInput.utf8), publicKey: key.publicKey, in: folder)
        #expect(verdict.status == 0, "openssl: \(verdict.output)")
        var forged = decoded.signature
        forged[10] ^= 1
        #expect(try OpenSSLVerify.check(signature: forged, over: Array(decoded.signingInput.utf8), publicKey: key.publicKey, in: folder).status != 0)
    }
}

/// `openssl dgst -sha256 -verify` over a raw ES256 signature: DER-encoded
/// here first, as the command wants it.
enum OpenSSLVerify {
    static func check(signature: [UInt8], over input: [UInt8], publicKey: PublicKey, in folder: URL) throws -> Subprocess.Result {
        let keyFile = folder.appendingPathComponent("public.pem")
        let inputFile = folder.appendingPathComponent("input")
        let signatureFile = folder.appendingPathComponent("signature.der")
        try Data(publicKey.pem.utf8).write(to: keyFile)
        try Data(input).write(to: inputFile)
        try Data(der(rawSignature: signature)).write(to: signatureFile)
        return try Subprocess.run(URL(fileURLWithPath: "/usr/bin/openssl"),
                                  ["dgst", "-sha256", "-verify", keyFile.path, "-signature", signatureFile.path, inputFile.path],
                                  mergingStandardError: true)
    }

    /// SEQUENCE { INTEGER r, INTEGER s } (both under 128 bytes, so short lengths).
    static func der(rawSignature raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[..<32]) + integer(raw[32...])
        return [0x30, UInt8(body.count)] + body
    }
}
