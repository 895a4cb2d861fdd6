import CBOR
import Crypto
import MDoc
import Testing

/// What a received SessionTranscript says about its exchange (`TranscriptForm`),
/// and its canonical encoding (`CanonicalCBOR`): one identity per transcript,
/// whatever encoding a submitter chose.
struct TranscriptFormTests {
    static func form(_ transcript: CBOR) throws -> TranscriptForm {
        try TranscriptForm.of(try SessionTranscript(received: transcript.encoded()))
    }

    static func proximity(engagement: [CBOR.MapEntry]? = nil, handover: CBOR = nil) throws -> CBOR {
        let device = try PrivateKey.generate(curve: .p256)
        let reader = try PrivateKey.generate(curve: .p256)
        let entries = engagement ?? [.init(0, "1.0"), .init(1, [1, .embedded(COSEKey.encode(device.publicKey))])]
        return [.embedded(.map(entries)), .embedded(COSEKey.encode(reader.publicKey)), handover]
    }

    static let hash = CBOR.bytes([UInt8](repeating: 0xab, count: 32))

    @Test func eachFormIsNamed() throws {
        #expect(try Self.form([nil, nil, ["AppleIdentityPresentment_1.0", .bytes([1]), "m", "t", Self.hash]]).name.hasPrefix("Apple in-app"))
        #expect(try Self.form([nil, nil, ["AppleIdentityPresentment_1.1", .bytes([1])]]).name.hasPrefix("Apple in-app"), "a lookalike is the same")
        #expect(try Self.form([nil, nil, ["dcapi", Self.hash]]).name.hasPrefix("Digital Credentials"))
        #expect(try Self.form([nil, nil, ["DCAPI", Self.hash]]).name.hasPrefix("Digital Credentials"), "a lookalike is the same")
        #expect(try Self.form([nil, nil, ["OpenID4VPHandover", Self.hash]]).name == "OpenID4VP")
        #expect(try Self.form([nil, nil, ["OpenID4VPDCAPIHandover", Self.hash]]).name.hasPrefix("OpenID4VP over the Digital Credentials API"))
        #expect(try Self.form([nil, nil, [Self.hash, Self.hash, "nonce"]]).name == "OpenID4VP")
        #expect(try Self.form([nil, nil, ["123456", "client", "https://rp.example/response", "nonce"]]).name == "OpenID4VP")
        #expect(try Self.form(Self.proximity()).name.contains("qr"))
        #expect(try Self.form(Self.proximity(handover: [.bytes([1, 2]), nil])).name.contains("nfc"))
    }

    /// Remote handovers that name nobody, and broken proximity parts, are malformed.
    @Test(arguments: [
        "null handover", "empty hash", "short hash", "unknown name", "empty nonce", "no engagement key", "untagged engagement",
        "engagement without reader key", "three-item NFC handover", "text handover",
    ])
    func malformedTranscriptsAreRefused(_ name: String) throws {
        let transcript: CBOR = switch name {
        case "null handover": [nil, nil, nil]
        case "empty hash": [nil, nil, ["OpenID4VPHandover", .bytes([])]]
        case "short hash": [nil, nil, ["OpenID4VPDCAPIHandover", .bytes([1, 2, 3])]]
        case "unknown name": [nil, nil, ["SomeOtherHandover", Self.hash]]
        case "empty nonce": [nil, nil, [Self.hash, Self.hash, ""]]
        case "no engagement key": try Self.proximity(engagement: [.init(0, "1.0"), .init(1, [1])])
        case "untagged engagement": [.map([.init(0, "1.0")]), .embedded(.map([])), nil]
        case "engagement without reader key": [.embedded(.map([.init(0, "1.0"), .init(1, [1, .embedded(COSEKey.encode(try PrivateKey.generate(curve: .p256).publicKey))])])), nil, nil]
        case "three-item NFC handover": try Self.proximity(handover: [.bytes([1]), nil, nil])
        default: try Self.proximity(handover: "x")
        }
        #expect(throws: MDocError.self, "\(name)") { try Self.form(transcript) }
    }

    /// One transcript, however encoded, has one canonical encoding; another transcript another.
    @Test func reencodingsShareOneCanonicalEncoding() throws {
        let device = try PrivateKey.generate(curve: .p256)
        let reader = try PrivateKey.generate(curve: .p256)
        let key = COSEKey.encode(device.publicKey)
        let engagement: CBOR = .map([.init(0, "1.0"), .init(1, [1, .embedded(key)])])
        let reordered: CBOR = .map([.init(1, [1, .embedded(key)]), .init(0, "1.0")])
        let plain = CBOR.array([.embedded(engagement), .embedded(COSEKey.encode(reader.publicKey)), nil]).encoded()
        // The outer array's head in its 2-byte form, 98 03 for 83.
        let longHead = [0x98, 0x03] + plain.dropFirst()
        let innerReordered = CBOR.array([.embedded(reordered), .embedded(COSEKey.encode(reader.publicKey)), nil]).encoded()
        let canonical = try CanonicalCBOR.encoding(of: plain, limits: .default)
        #expect(try CanonicalCBOR.encoding(of: longHead, limits: .default) == canonical)
        #expect(try CanonicalCBOR.encoding(of: innerReordered, limits: .default) == canonical)
        #expect(longHead != plain && innerReordered != plain, "the encodings differ")
        let other = CBOR.array([.embedded(engagement), .embedded(COSEKey.encode(device.publicKey)), nil]).encoded()
        #expect(try CanonicalCBOR.encoding(of: other, limits: .default) != canonical)
        #expect(try CanonicalCBOR.encoding(of: canonical, limits: .default) == canonical, "a fixed point")
    }
}
