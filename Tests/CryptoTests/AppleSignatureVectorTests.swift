import Crypto
import Foundation
import Testing
import TestSupport

/// ES256 signatures from Apple's "Verify with Wallet" sample, over the exact
/// Sig_structure bytes the sample gives.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found: set VERIDOC_VECTORS or place shared/vectors next to the package"))
struct AppleSignatureVectorTests {
    static let folder = "apple-verify-with-wallet-sample/"

    static func intermediates(_ name: String) throws -> [String: String] {
        let json = try #require(try Vectors.json(folder + "signature_intermediates.json") as? [String: Any])
        return try #require(json[name] as? [String: String])
    }

    @Test func issuerSignature() throws {
        let values = try Self.intermediates("issuer_signature")
        let toBeSigned = hex(try #require(values["data_to_sign"]))
        #expect(hexString(sha256(toBeSigned)) == values["digest"])
        let point = hex(try #require(values["public_key"]))
        try #require(point.count == 64)
        let key = try PublicKey(curve: .p256, x: Array(point[..<32]), y: Array(point[32...]))
        // The JSON key is the one in the DS certificate: its SPKI bit string
        // (04 || x || y) appears verbatim in the certificate's DER.
        let certificate = try Self.pemBody(Vectors.text(Self.folder + "issuer_signing.pem"))
        #expect(certificate.firstRange(of: [0x04] + point) != nil)

        var signature = hex(try #require(values["signature"]))
        #expect(key.isValidSignature(signature, for: toBeSigned, hash: .sha256))
        signature[10] ^= 0x80
        #expect(!key.isValidSignature(signature, for: toBeSigned, hash: .sha256))
    }

    @Test func deviceSignature() throws {
        let values = try Self.intermediates("device_signature")
        let toBeSigned = hex(try #require(values["data_to_sign"]))
        #expect(hexString(sha256(toBeSigned)) == values["digest"])
        // COSE_Key {1: 2, -1: 1, -2: x, -3: y}: a4 01 02 20 01 21 58 20 <x> 22 58 20 <y>.
        let coseKey = try Vectors.hex(Self.folder + "device_public_key_cose.hex")
        try #require(coseKey.count == 75 && coseKey.starts(with: [0xa4, 0x01, 0x02, 0x20, 0x01, 0x21, 0x58, 0x20]))
        try #require(Array(coseKey[40..<43]) == [0x22, 0x58, 0x20])
        let key = try PublicKey(curve: .p256, x: Array(coseKey[8..<40]), y: Array(coseKey[43..<75]))
        let signature = hex(try #require(values["signature"]))
        #expect(key.isValidSignature(signature, for: toBeSigned, hash: .sha256))
        #expect(!key.isValidSignature(signature, for: toBeSigned.dropLast(), hash: .sha256))
        #expect(!key.isValidSignature(signature, for: toBeSigned, hash: .sha384))
    }

    static func pemBody(_ pem: String) throws -> [UInt8] {
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(try #require(Data(base64Encoded: base64)))
    }
}
