import CBOR
import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import Testing
import TestIssuer
import Verification

/// Damaged and hostile payloads are rejected with a reason code, never a crash,
/// and structural damage is `payload.malformed` exactly.
@Suite struct RobustnessTests {
    /// Codes that damage to the Apple envelope may legitimately produce: it can
    /// only break the envelope, name another key, change the transcript hash or break the AEAD.
    static let envelopeCodes: Set<ReasonCode> = [
        .payloadMalformed, .payloadUnsupported, .decryptionUnknownKey, .decryptionTranscriptMismatch, .decryptionFailed,
    ]

    @Test("every truncation of an Apple envelope is payload.malformed")
    func appleEnvelopeTruncations() throws {
        let (_, verifier, event) = try Fixtures.world(seed: 400, flow: .appleWalletApp)
        let envelope = event.payload
        #expect((5_000...9_000).contains(envelope.count), "envelope is \(envelope.count) bytes")
        #expect(Fixtures.verify(event, with: verifier).codes == [])
        var wrong: [Int] = []
        for length in 1..<envelope.count where Fixtures.verify(event.replacingPayload(envelope.prefix(length)), with: verifier).codes != [.payloadMalformed] {
            wrong.append(length)
        }
        #expect(wrong.isEmpty, "prefix lengths not rejected as payload.malformed: \(wrong.prefix(20))")
        // An empty payload is no base64 payload at all.
        #expect(Fixtures.verify(event.replacingPayload([]), with: verifier).codes == [.eventInvalid])
    }

    @Test("every truncation of an iso-device-response DeviceResponse is payload.malformed")
    func deviceResponseTruncations() throws {
        let (_, verifier, event) = try Fixtures.world(seed: 401, flow: .isoDeviceResponse)
        let response = event.deviceResponse
        var wrong: [Int] = []
        for length in 1..<response.count where Fixtures.verify(event.replacingPayload(response.prefix(length)), with: verifier).codes != [.payloadMalformed] {
            wrong.append(length)
        }
        #expect(wrong.isEmpty, "prefix lengths not rejected as payload.malformed: \(wrong.prefix(20))")
    }

    @Test("truncated DeviceResponses sealed correctly reach the parser and are payload.malformed", arguments: [Flow.appleWalletApp, .appleWalletWeb])
    func resealedTruncations(_ flow: Flow) throws {
        let (factory, verifier, event) = try Fixtures.world(seed: 402, flow: flow)
        let recipient = factory.merchant.currentKey.publicKey
        let response = event.deviceResponse
        var wrong: [Int] = []
        // Every 7th length keeps the HPKE work modest; the unencrypted flow above covers every length.
        for length in stride(from: 1, to: response.count, by: 7) {
            if try Self.codes(sealing: Array(response.prefix(length)), like: event, to: recipient, verifier: verifier) != [.payloadMalformed] { wrong.append(length) }
        }
        #expect(wrong.isEmpty, "\(flow.rawValue) prefix lengths not rejected as payload.malformed: \(wrong.prefix(20))")
    }

    @Test("3000 seeded byte flips of an Apple envelope are rejected for envelope reasons")
    func appleEnvelopeFlips() throws {
        let (_, verifier, event) = try Fixtures.world(seed: 403, flow: .appleWalletApp)
        let envelope = event.payload
        var random = TestIssuer.SeededRandom(seed: 403)
        var seen: [ReasonCode: Int] = [:]
        for round in 0..<3_000 {
            let damaged = Self.flip(envelope, round: round, using: &random)
            let result = Fixtures.verify(event.replacingPayload(damaged), with: verifier)
            #expect(!result.isVerified && !result.codes.isEmpty, "round \(round) verified")
            #expect(Set(result.codes).isSubset(of: Self.envelopeCodes), "round \(round): \(result.codes)")
            for code in result.codes { seen[code, default: 0] += 1 }
        }
        // Flips land in the ciphertext most of the time, but the header must be reached too.
        #expect(seen[.decryptionFailed, default: 0] > 1_000)
        #expect(seen[.payloadMalformed, default: 0] > 0)
    }

    @Test("2000 seeded byte flips inside an unencrypted DeviceResponse never crash or verify tampered bytes")
    func deviceResponseFlips() throws {
        let (_, verifier, event) = try Fixtures.world(seed: 404, flow: .isoDeviceResponse)
        let response = event.deviceResponse
        // Only "version" and "status" are outside every signature and digest;
        // a flip there may legitimately still verify (e.g. status 0 → -1).
        let item = try CBORDecoder().decode(response)
        let unauthenticated = [item["version"]!.encoded.indices, item["status"]!.encoded.indices]
        var random = TestIssuer.SeededRandom(seed: 404)
        var codes = Set<ReasonCode>()
        for round in 0..<2_000 {
            var positions: [Int] = []
            let damaged = Self.flip(response, round: round, using: &random, positions: &positions)
            let result = Fixtures.verify(event.replacingPayload(damaged), with: verifier)
            #expect(result.isVerified == result.codes.isEmpty)
            if result.isVerified {
                #expect(positions.allSatisfy { position in unauthenticated.contains { $0.contains(position) } },
                        "round \(round): flips at \(positions) verified")
            }
            codes.formUnion(result.codes)
        }
        // The flips reached the deep checks, not only the parser.
        #expect(codes.isSuperset(of: [.payloadMalformed, .issuerSignatureInvalid, .msoDigestMismatch, .deviceSignatureInvalid]), "\(codes)")
    }

    /// `[0x81] * 10000 + [0]` and a bstr head claiming 2^62 bytes.
    static let hostile: [(String, [UInt8])] = [
        ("10,000-deep nesting", [UInt8](repeating: 0x81, count: 10_000) + [0x00]),
        ("2^62 byte string", [0x5b, 0x40, 0, 0, 0, 0, 0, 0, 0]),
        ("2^62 map entries", [0xbb, 0x40, 0, 0, 0, 0, 0, 0, 0]),
        ("2^64-1 array items", [0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        ("indefinite array never closed", [0x9f] + [UInt8](repeating: 0x9f, count: 5_000)),
    ]

    @Test("hostile CBOR as the payload of each flow is exactly payload.malformed", arguments: Flow.allCases)
    func hostilePayloads(_ flow: Flow) throws {
        let (_, verifier, event) = try Fixtures.world(seed: 405, flow: flow)
        for (name, bytes) in Self.hostile {
            #expect(Fixtures.verify(event.replacingPayload(bytes), with: verifier).codes == [.payloadMalformed], "\(name) in \(flow.rawValue)")
        }
    }

    @Test("hostile CBOR inside a correctly sealed plaintext is exactly payload.malformed", arguments: [Flow.appleWalletApp, .appleWalletWeb, .openID4VPDCAPI])
    func hostilePlaintexts(_ flow: Flow) throws {
        let (factory, verifier, event) = try Fixtures.world(seed: 406, flow: flow)
        for (name, bytes) in Self.hostile {
            #expect(try Self.codes(sealing: bytes, like: event, to: factory.merchant.currentKey.publicKey, verifier: verifier) == [.payloadMalformed],
                    "\(name) in \(flow.rawValue)")
        }
    }

    @Test("huge declared lengths inside valid-looking structures are exactly payload.malformed")
    func hugeLengthsInsideMaps() throws {
        var factory = try Fixtures.factory(seed: 407)
        let verifier = try factory.verifier()
        let huge: [UInt8] = [0x5b, 0x40, 0, 0, 0, 0, 0, 0, 0]

        // Apple envelope whose "data" claims 2^62 bytes, everything else intact.
        let apple = try factory.event(.appleWalletApp)
        var envelope = Array(try CBORDecoder().decode(apple.payload).value.replacing("data", with: .bytes([])).encoded().dropLast())
        envelope += huge + [0x00]
        #expect(Fixtures.verify(apple.replacingPayload(envelope), with: verifier).codes == [.payloadMalformed])

        // DeviceResponse variants, as iso-device-response and resealed in both encrypted flows.
        let iso = try factory.event(.isoDeviceResponse)
        let response = try CBORDecoder().decode(iso.deviceResponse).value
        let documents = response["documents"]!
        guard case .array(let list) = documents, case .some(let document) = list.first else { Issue.record("no document"); return }
        let issuerSigned = document["issuerSigned"]!
        let nameSpaces = issuerSigned["nameSpaces"]!
        guard case .array(let items)? = nameSpaces[.text(TestIssuer.Credential.mDLNameSpace)] else { Issue.record("no items"); return }
        func withDocument(_ document: CBOR) -> [UInt8] { response.replacing("documents", with: [document]).encoded() }
        func withItems(_ items: [CBOR]) -> [UInt8] {
            withDocument(document.replacing("issuerSigned", with: issuerSigned.replacing(
                "nameSpaces", with: nameSpaces.replacing(.text(TestIssuer.Credential.mDLNameSpace), with: .array(items)))))
        }
        let variants: [(String, [UInt8])] = [
            ("documents claims 2^64-1 items", response.replacing("documents", with: .preEncoded([0x9b] + [UInt8](repeating: 0xff, count: 8))).encoded()),
            ("docType claims 2^62 bytes", withDocument(document.replacing("docType", with: .preEncoded([0x7b, 0x40, 0, 0, 0, 0, 0, 0, 0])))),
            ("IssuerSignedItem bstr content claims 2^62 bytes", withItems([.tagged(24, .bytes(huge))] + items.dropFirst())),
            ("IssuerSignedItem content map claims 2^62 entries", withItems([.tagged(24, .bytes([0xbb, 0x40, 0, 0, 0, 0, 0, 0, 0]))] + items.dropFirst())),
            ("deviceSigned nameSpaces content 10,000 deep", withDocument(document.replacing("deviceSigned", with: document["deviceSigned"]!.replacing(
                "nameSpaces", with: .tagged(24, .bytes([UInt8](repeating: 0x81, count: 10_000) + [0])))))),
        ]
        for (name, bytes) in variants {
            #expect(Fixtures.verify(iso.replacingPayload(bytes), with: verifier).codes == [.payloadMalformed], "iso: \(name)")
            for flow in [Flow.appleWalletApp, .appleWalletWeb, .openID4VPDCAPI] {
                let event = try factory.event(flow)
                #expect(try Self.codes(sealing: bytes, like: event, to: factory.merchant.currentKey.publicKey, verifier: verifier) == [.payloadMalformed],
                        "\(flow.rawValue): \(name)")
            }
        }
    }

    @Test("a correctly signed MSO with a huge declared length inside is exactly mso.malformed")
    func hugeLengthInsideSignedMSO() throws {
        var (factory, verifier, event) = try Fixtures.world(seed: 408, flow: .isoDeviceResponse)
        var options = TestIssuer.IssuanceOptions(now: Fixtures.now)
        options.payloadOverride = CBOR.tagged(24, .bytes([0xa1, 0x67] + Array("version".utf8) + [0x7b, 0x40, 0, 0, 0, 0, 0, 0, 0])).encoded()
        let issued = try factory.authority.issue(factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: options, using: &factory.random)
        let document = try factory.holder.present(issued, transcript: event.transcript)
        let result = Fixtures.verify(event.replacingPayload(TestIssuer.deviceResponse(documents: [document])), with: verifier)
        #expect(result.codes == [.msoMalformed])
        #expect(result.report.status(of: .issuerSignature) == .passed)
    }

    // MARK: helpers

    /// Seals `plaintext` for `event`'s flow and transcript: the Apple envelope
    /// wraps it as `{"identity": plaintext}`, Annex C seals it bare.
    static func seal(_ plaintext: [UInt8], like event: TestIssuer.GeneratedEvent, to recipient: PublicKey) throws -> [UInt8] {
        switch event.flow {
        case .appleWalletApp: try AppleEnvelope.seal(deviceResponse: plaintext, transcript: event.transcript, recipient: recipient)
        case .appleWalletWeb: try AnnexCEncryptedResponse.seal(deviceResponse: plaintext, transcript: event.transcript, recipient: recipient)
        case .isoDeviceResponse: plaintext
        case .openID4VPDCAPI:
            Array(try TestIssuer.EventFactory.openID4VPResponse(
                plaintext, to: recipient, keyID: ECJWK.thumbprint(of: recipient).map(Base64.encodeURL)).utf8)
        }
    }

    /// The codes `event` is reported for with `plaintext` sealed to `recipient` as its payload.
    static func codes(sealing plaintext: [UInt8], like event: TestIssuer.GeneratedEvent, to recipient: PublicKey, verifier: Verifier) throws -> [ReasonCode] {
        Fixtures.verify(event.replacingPayload(try seal(plaintext, like: event, to: recipient)), with: verifier).codes
    }

    static func flip(_ bytes: [UInt8], round: Int, using random: inout TestIssuer.SeededRandom) -> [UInt8] {
        var positions: [Int] = []
        return flip(bytes, round: round, using: &random, positions: &positions)
    }

    /// Even rounds flip one byte, odd rounds two to eight; every mask is non-zero.
    static func flip(_ bytes: [UInt8], round: Int, using random: inout TestIssuer.SeededRandom, positions: inout [Int]) -> [UInt8] {
        var copy = bytes
        let count = round % 2 == 0 ? 1 : Int.random(in: 2...8, using: &random)
        positions = (0..<count).map { _ in Int.random(in: 0..<bytes.count, using: &random) }
        for position in positions { copy[position] ^= UInt8.random(in: 1...255, using: &random) }
        // Two flips of one byte can cancel; keep the damage real.
        if copy == bytes { copy[positions[0]] ^= 0x01 }
        return copy
    }
}
