import Crypto
import Foundation
import JSON
import Testing
import TestSupport
import JOSE

/// Against an independent JOSE implementation: jwcrypto (PyPI, installed by
/// `make test` into the tools venv) encrypts to Veridoc's key and Veridoc
/// decrypts; Veridoc seals and jwcrypto decrypts; both compute the same
/// RFC 7638 thumbprint.
@Suite struct JOSEInteropTests {
    static let python = Binaries.repository.appendingPathComponent(".build/tools-venv/bin/python")
    static let available = (try? Subprocess.run(python, ["-c", "import jwcrypto"]).status) == 0

    /// Runs `script` with the arguments; its stdout, trimmed.
    static func jwcrypto(_ script: String, _ arguments: [String]) throws -> String {
        try Subprocess.output(python, ["-c", script] + arguments).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A fresh key and its private JWK (the scalar is drawn here, so the test knows it).
    static func keyWithJWK() throws -> (PrivateKey, String) {
        let scalar = secureRandomBytes(32)
        let key = try PrivateKey(curve: .p256, scalar: scalar)
        var object = try #require(ECJWK.object(for: key.publicKey))
        _ = object.append("d", .string(Base64.encodeURL(scalar)))
        return (key, JSONValue.object(object).jsonString(keyOrder: .insertion))
    }

    @Test(.enabled(if: available, "needs .build/tools-venv/bin/python with jwcrypto: run through `make test`"),
          arguments: CompactJWE.ContentEncryption.allCases)
    func jwcryptoEncryptsVeridocDecrypts(_ encryption: CompactJWE.ContentEncryption) throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let publicJWK = JSONValue.object(try #require(ECJWK.object(for: recipient.publicKey))).jsonString(keyOrder: .insertion)
        let plaintext = #"{"vp_token":{"mdl":["o2d2ZXJzaW9u"]}}"#
        let compact = try Self.jwcrypto("""
            import sys, json
            from jwcrypto import jwk, jwe
            key = jwk.JWK.from_json(sys.argv[1])
            header = {"alg": "ECDH-ES", "enc": sys.argv[2], "kid": "session-key", "apu": "QWxpY2U", "apv": "Qm9i"}
            token = jwe.JWE(sys.argv[3].encode(), protected=json.dumps(header))
            token.add_recipient(key)
            print(token.serialize(compact=True))
            """, [publicJWK, encryption.rawValue, plaintext])
        let jwe = try CompactJWE(compact: compact)
        #expect(jwe.keyID == "session-key")
        #expect(jwe.encryption == encryption)
        #expect(try jwe.decrypt(with: recipient) == Array(plaintext.utf8))
    }

    @Test(.enabled(if: available, "needs .build/tools-venv/bin/python with jwcrypto: run through `make test`"),
          arguments: CompactJWE.ContentEncryption.allCases)
    func veridocSealsJwcryptoDecrypts(_ encryption: CompactJWE.ContentEncryption) throws {
        let (recipient, privateJWK) = try Self.keyWithJWK()
        let compact = try CompactJWE.seal(Array("sealed by Veridoc".utf8), to: recipient.publicKey, keyID: "k", encryption: encryption,
                                          partyUInfo: Array("wallet".utf8), partyVInfo: Array("nonce".utf8))
        let opened = try Self.jwcrypto("""
            import sys
            from jwcrypto import jwk, jwe
            token = jwe.JWE()
            token.deserialize(sys.argv[2], key=jwk.JWK.from_json(sys.argv[1]))
            print(token.payload.decode())
            """, [privateJWK, compact])
        #expect(opened == "sealed by Veridoc")
    }

    @Test(.enabled(if: available, "needs .build/tools-venv/bin/python with jwcrypto: run through `make test`"))
    func thumbprintsAgree() throws {
        for _ in 0..<4 {
            let key = try PrivateKey.generate(curve: .p256).publicKey
            let jwk = JSONValue.object(try #require(ECJWK.object(for: key, extra: [("kid", "x"), ("use", "enc")]))).jsonString(keyOrder: .insertion)
            let theirs = try Self.jwcrypto("""
                import sys
                from jwcrypto import jwk
                print(jwk.JWK.from_json(sys.argv[1]).thumbprint())
                """, [jwk])
            #expect(theirs == Base64.encodeURL(try #require(ECJWK.thumbprint(of: key))))
        }
    }
}
