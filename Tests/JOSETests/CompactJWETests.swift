import Crypto
import Foundation
import JSON
import Testing
import TestSupport
@testable import JOSE

/// The JWE form OpenID4VP responses take, against RFC 7518's worked example,
/// itself, and one change at a time.
@Suite struct CompactJWETests {
    /// RFC 7518 Appendix C: ECDH-ES between Alice's ephemeral key and Bob's
    /// key, apu "Alice", apv "Bob", A128GCM, gives this content key.
    @Test func concatKDFMatchesRFC7518AppendixC() throws {
        let bob = try PrivateKey(curve: .p256, scalar: try #require(Base64.decodeURLUnpadded("VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw")))
        let alice = try ECJWK.publicKey(from: [
            "kty": "EC", "crv": "P-256",
            "x": "gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0", "y": "SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps",
        ], context: "epk")
        let key = ConcatKDF.derive(sharedSecret: try bob.sharedSecret(with: alice), algorithmID: "A128GCM",
                                   partyUInfo: Array("Alice".utf8), partyVInfo: Array("Bob".utf8), keyByteCount: 16)
        #expect(Base64.encodeURL(key) == "VqqN6vgjbSBcIijNcacQGg")
    }

    @Test(arguments: CompactJWE.ContentEncryption.allCases)
    func sealedOpens(_ encryption: CompactJWE.ContentEncryption) throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let plaintext = Array(#"{"vp_token":{"mdl":["AA"]}}"#.utf8)
        let compact = try CompactJWE.seal(plaintext, to: recipient.publicKey, keyID: "k1", encryption: encryption,
                                          partyUInfo: [1, 2], partyVInfo: [3])
        let jwe = try CompactJWE(compact: compact)
        #expect(jwe.keyID == "k1")
        #expect(jwe.encryption == encryption)
        #expect(try jwe.decrypt(with: recipient) == plaintext)
        #expect(throws: JOSEError.decryptionFailed) { try jwe.decrypt(with: try PrivateKey.generate(curve: .p256)) }
    }

    /// Every byte of the header, IV, ciphertext and tag, changed in turn
    /// (decoded, one bit flipped, encoded again), is refused.
    @Test func everyChangedByteIsRefused() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let compact = try CompactJWE.seal(Array("a DeviceResponse".utf8), to: recipient.publicKey, keyID: "k")
        let segments = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var refused = 0, tried = 0
        for segment in [0, 2, 3, 4] {
            let bytes = try #require(Base64.decodeURLUnpadded(segments[segment]))
            for index in bytes.indices {
                var changed = bytes
                changed[index] ^= 0x01
                var altered = segments
                altered[segment] = Base64.encodeURL(changed)
                tried += 1
                do {
                    _ = try CompactJWE(compact: altered.joined(separator: ".")).decrypt(with: recipient)
                } catch {
                    refused += 1
                }
            }
        }
        #expect(tried > 100)
        #expect(refused == tried)
    }

    @Test func refusesOtherForms() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let good = try CompactJWE.seal([1, 2, 3], to: recipient.publicKey, keyID: nil)
        let segments = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let headerBytes = try #require(Base64.decodeURLUnpadded(segments[0]))
        let header = try #require(try JSONParser().parse(headerBytes).objectValue)
        func with(_ change: (inout JSONObject) -> Void) -> String {
            var edited = header
            change(&edited)
            var parts = segments
            parts[0] = Base64.encodeURL(JSONValue.object(edited).jsonBytes(keyOrder: .insertion))
            return parts.joined(separator: ".")
        }
        func replacing(_ name: String, _ value: JSONValue) -> String {
            with { object in
                var rebuilt = JSONObject()
                for member in object.members { _ = rebuilt.append(member.key, member.key == name ? value : member.value) }
                if !object.contains(name) { _ = rebuilt.append(name, value) }
                object = rebuilt
            }
        }
        var epkWithD = try #require(header["epk"]?.objectValue)
        _ = epkWithD.append("d", "AAAA")
        let cases: [(String, String)] = [
            ("RSA key transport", replacing("alg", "RSA-OAEP-256")),
            ("ECDH-ES with key wrap", replacing("alg", "ECDH-ES+A128KW")),
            ("no alg", with { object in
                var rebuilt = JSONObject()
                for member in object.members where member.key != "alg" { _ = rebuilt.append(member.key, member.value) }
                object = rebuilt
            }),
            ("CBC content encryption", replacing("enc", "A128CBC-HS256")),
            ("compressed", replacing("zip", "DEF")),
            ("nested", replacing("cty", "JWT")),
            ("nested, as a media type", replacing("cty", "application/jwt")),
            ("a text of dots", String(repeating: ".", count: 100_000)),
            ("critical extension", replacing("crit", ["exp"])),
            ("key by value", replacing("jwk", .object(try #require(header["epk"]?.objectValue)))),
            ("key by URL", replacing("jku", "https://example.com/keys")),
            ("epk with a private key", replacing("epk", .object(epkWithD))),
            ("epk off the curve", replacing("epk", ["kty": "EC", "crv": "P-256", "x": .string(Base64.encodeURL([UInt8](repeating: 1, count: 32))),
                                                     "y": .string(Base64.encodeURL([UInt8](repeating: 2, count: 32)))])),
            ("epk on P-384", replacing("epk", ["kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"])),
            ("empty kid", replacing("kid", "")),
            ("numeric kid", replacing("kid", 7)),
            ("padded segment", segments[0] + "=." + segments[1...].joined(separator: ".")),
            ("a JWS", [segments[0], segments[2], segments[3]].joined(separator: ".")),
            ("six segments", good + ".AA"),
            ("encrypted key present", [segments[0], "AAAA", segments[2], segments[3], segments[4]].joined(separator: ".")),
            ("short IV", [segments[0], "", "AAAA", segments[3], segments[4]].joined(separator: ".")),
            ("short tag", [segments[0], "", segments[2], segments[3], "AAAA"].joined(separator: ".")),
            ("huge header", String(repeating: "A", count: CompactJWE.maxHeaderBytes + 4) + "." + segments[1...].joined(separator: ".")),
            ("header not JSON", Base64.encodeURL(Array("alg".utf8)) + "." + segments[1...].joined(separator: ".")),
        ]
        for (name, compact) in cases {
            #expect(throws: JOSEError.self, "\(name)") { _ = try CompactJWE(compact: compact).decrypt(with: recipient) }
        }
        // The unchanged token opens: the cases fail for their change, not for the harness.
        #expect(try CompactJWE(compact: good).decrypt(with: recipient) == [1, 2, 3])
        #expect(try CompactJWE(compact: with { _ in }).decrypt(with: recipient) == [1, 2, 3])
    }
}
