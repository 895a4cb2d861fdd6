import CBOR
import Foundation
import MDoc
import Testing
import TestSupport

/// DeviceResponse (and Apple's `{"identity": …}` around it) has an in-place
/// reader for the form wallets send and the general reader (a `CBORItem`
/// tree, then `DeviceResponse(_:)`) for everything else. Each response here
/// is read both ways: what the in-place reader takes must read exactly as
/// the general reader reads it, and every real response must be taken by it
/// (or the comparison would only ever test the general reader).
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct DeviceResponseFastPathTests {
    static let responses = Vectors.deviceResponses

    /// Everything a reader made of a response, as bytes and values that compare.
    static func summary(_ response: DeviceResponse) -> [String] {
        var out = ["version \(response.version)", "status \(response.status)"]
        for document in response.documents {
            out.append("document \(document.docType)")
            let auth = document.issuerSigned.issuerAuth
            out.append("issuerAuth \(hexString(auth.protectedBytes)) \(hexString(auth.unprotectedHeader.encoded)) \(auth.payload.map(hexString) ?? "-") \(hexString(auth.signature))")
            for space in document.issuerSigned.nameSpaces {
                out.append("namespace \(space.name)")
                for item in space.items {
                    out.append("item \(item.digestID) \(item.elementIdentifier) \(hexString(item.taggedBytes)) \(hexString(item.random)) \(hexString(item.elementValue.encoded))")
                }
            }
            if let device = document.deviceSigned {
                out.append("deviceSigned \(hexString(device.nameSpacesBytes)) \(device.nameSpaces.map { "\($0.name): \($0.elements)" })")
                switch device.authentication {
                case .signature(let signature): out.append("deviceSignature \(hexString(signature.protectedBytes)) \(signature.payload.map(hexString) ?? "-") \(hexString(signature.signature))")
                case .mac(let mac): out.append("deviceMac \(hexString(mac.protectedBytes)) \(hexString(mac.tag))")
                }
            }
        }
        return out
    }

    static func general(_ bytes: [UInt8]) -> Result<[String], MDocError> {
        Result { () throws(MDocError) in
            let item = try structure { () throws(CBORError) in try CBORDecoder().decode(bytes) }
            return summary(try DeviceResponse(item))
        }
    }

    /// The in-place reader's result when it takes `bytes`, which must then be the general reader's.
    @discardableResult
    static func expectSame(_ bytes: [UInt8], _ note: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let fast = DeviceResponse.commonForm(bytes[...]) else { return false }
        #expect(general(bytes) == .success(summary(fast)), "\(note)", sourceLocation: sourceLocation)
        return true
    }

    @Test func realResponsesAreReadInPlaceAndAlike() throws {
        for path in Self.responses {
            let bytes = try Vectors.hex(path)
            #expect(Self.expectSame(bytes, path), "\(path): not read in place")
        }
    }

    /// Apple's plaintext wrapper: read in place, or by the general reader when it has more than the one key.
    @Test func applePlaintextReadsTheSame() throws {
        let response = try Vectors.hex("apple-verify-with-wallet-sample/device_response.hex")
        let plaintext = CBOR.map([.init("identity", .preEncoded(response))]).encoded()
        let read = try AppleEnvelope.deviceResponse(inPlaintext: plaintext)
        #expect(Self.summary(read) == (try Self.general(response).get()))
        let extra = CBOR.map([.init("other", 1), .init("identity", .preEncoded(response))]).encoded()
        #expect(Self.summary(try AppleEnvelope.deviceResponse(inPlaintext: extra)) == (try Self.general(response).get()))
        // Refusals are the general reader's: the same error as before.
        for broken in [Array(plaintext.dropLast()), plaintext + [0], CBOR.map([.init("identity", .preEncoded(response)), .init("identity", 1)]).encoded()] {
            let before = Result { () throws(MDocError) in try DeviceResponse(AppleEnvelope.identity(inPlaintext: broken)) }.map(Self.summary)
            let now = Result { () throws(MDocError) in try AppleEnvelope.deviceResponse(inPlaintext: broken) }.map(Self.summary)
            #expect(now == before)
            #expect(throws: MDocError.self) { try now.get() }
        }
    }

    /// Forms the in-place reader must leave to the general one, or read alike.
    @Test func unusualFormsReadTheSame() throws {
        let bytes = try Vectors.hex("iso18013-5-annex-d/device_response.hex")
        let item = try CBORDecoder().decode(bytes)
        let entries = try #require(item.entries)
        func map(_ parts: [[UInt8]], indefinite: Bool = false) -> [UInt8] {
            var head: [UInt8] = []
            CBOR.appendHead(major: 5, UInt64(parts.count / 2), to: &head)
            return indefinite ? [0xBF] + parts.joined() + [0xFF] : head + parts.joined()
        }
        let pairs = entries.flatMap { [Array($0.key.encoded), Array($0.value.encoded)] }
        // Reordered, an extra key, an indefinite map, a wide map head: read alike or left to the general reader.
        let reordered = map(Array(pairs[2...]) + Array(pairs[..<2]))
        #expect(Self.expectSame(reordered, "reordered"))
        #expect(Self.expectSame(map(pairs + [CBOR.text("documentErrors").encoded(), CBOR.array([["x": 1]]).encoded()]), "extra key"))
        #expect(!Self.expectSame(map(pairs, indefinite: true), "indefinite"))
        #expect(Self.expectSame([0xB9, 0x00, UInt8(pairs.count / 2)] + pairs.joined(), "wide map head"))
        // Duplicate keys, a missing field, a wrong type: refused, by the general reader.
        for (note, broken) in [
            ("version twice", map(pairs + Array(pairs[..<2]))),
            ("unknown key twice", map(pairs + [CBOR.text("x").encoded(), [0x01], CBOR.text("x").encoded(), [0x02]])),
            ("no version", map(pairs.enumerated().filter { CBOR.text("version").encoded() != pairs[$0.offset - $0.offset % 2] }.map(\.element))),
            ("status as text", map(pairs.enumerated().map { $0.offset % 2 == 1 && pairs[$0.offset - 1] == CBOR.text("status").encoded() ? CBOR.text("0").encoded() : $0.element })),
            ("trailing byte", bytes + [0x00]),
        ] {
            #expect(!Self.expectSame(broken, note), "\(note) taken by the in-place reader")
            #expect(throws: MDocError.self, "\(note)") { try Self.general(broken).get() }
        }
    }

    /// Every truncation and a sweep of single-byte changes over a real
    /// response: whatever the in-place reader takes, the general reader reads alike.
    @Test func mutationsReadTheSame() throws {
        let bytes = try Vectors.hex("apple-verify-with-wallet-sample/device_response.hex")
        // Every seventh cut and the last few (the sweep is slow in a debug build).
        for length in Array(stride(from: 0, to: bytes.count, by: 7)) + Array(bytes.count - 16..<bytes.count) {
            #expect(!Self.expectSame(Array(bytes.prefix(length)), "truncated to \(length)"))
        }
        var taken = 0
        for index in stride(from: bytes.startIndex, to: bytes.endIndex, by: 3) {
            for replacement: UInt8 in [0xFF, bytes[index] ^ 0x01] where replacement != bytes[index] {
                var mutated = bytes
                mutated[index] = replacement
                if Self.expectSame(mutated, "byte \(index) → \(replacement)") { taken += 1 }
            }
        }
        #expect(taken > 0)
    }
}

/// Runs a CBOR read as MDoc does, its error as `MDocError.malformed`.
private func structure<T>(_ body: () throws(CBORError) -> T) throws(MDocError) -> T {
    do { return try body() } catch { throw MDocError.malformed(describe(error)) }
}
