// The verify target's fixed world (one tenant, built once) and the seed writer
// for every target's corpus, from TestIssuer events of all three flows, with
// and without faults, plus the public vectors when they are present.
import CBOR
import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import TestIssuer
import Verification

struct Fixture: @unchecked Sendable {
    static let shared: Fixture = {
        do { return try Fixture() } catch { fatalError("fuzz fixture: \(error)") }
    }()

    let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    let verifier: Verifier
    let merchant: TestIssuer.Merchant
    /// Valid events of each flow, as generated and as parsed.
    let events: [Flow: TestIssuer.GeneratedEvent]
    let requests: [Flow: VerificationRequest]
    var factory: TestIssuer.EventFactory

    init() throws {
        factory = try TestIssuer.EventFactory(now: now, seed: 18_013)
        verifier = try factory.verifier()
        merchant = factory.merchant
        var events: [Flow: TestIssuer.GeneratedEvent] = [:]
        var requests: [Flow: VerificationRequest] = [:]
        for flow in Flow.allCases {
            let event = try factory.event(flow)
            events[flow] = event
            requests[flow] = try verifier.eventParser.parse(json: event.json()).get()
            precondition(verifier.verify(eventJSON: event.json(), at: now).isVerified, "fixture \(flow) verifies")
        }
        self.events = events
        self.requests = requests
    }

    /// The valid request of `flow` with its wallet bytes replaced by `response`
    /// (iso: the DeviceResponse itself; web and app: sealed to the merchant,
    /// so that the fuzzed bytes are the plaintext the verifier decrypts).
    func request(_ flow: Flow, deviceResponse response: [UInt8]) -> VerificationRequest {
        let request = requests[flow]!
        let transcript = events[flow]!.transcript
        let recipient = merchant.currentKey.publicKey
        let input: VerificationRequest.Input
        switch request.input {
        case .isoDeviceResponse(_, let sessionTranscript, let readerKey):
            input = .isoDeviceResponse(payload: response, sessionTranscript: sessionTranscript, ephemeralReaderKey: readerKey)
        case .appleWalletWeb(_, let info, let infoBytes, let origin):
            let sealed = (try? AnnexCEncryptedResponse.seal(deviceResponse: response, transcript: transcript, recipient: recipient)) ?? []
            input = .appleWalletWeb(response: sealed, encryptionInfo: info, encryptionInfoBytes: infoBytes, origin: origin)
        case .appleWalletApp(_, let nonce, let nonceText, let merchantID):
            let sealed = (try? AppleEnvelope.seal(deviceResponse: response, transcript: transcript, recipient: recipient)) ?? []
            input = .appleWalletApp(payload: sealed, nonce: nonce, nonceText: nonceText, merchantID: merchantID)
        case .openID4VPDCAPI(let origin, let nonce, _, let queryID):
            let keyID = ECJWK.thumbprint(of: recipient).map(Base64.encodeURL)
            let sealed = (try? TestIssuer.EventFactory.openID4VPResponse(response, to: recipient, keyID: keyID)) ?? ""
            input = .openID4VPDCAPI(origin: origin, nonce: nonce, response: .encrypted(sealed), credentialQueryID: queryID)
        }
        return VerificationRequest(
            id: request.id, source: request.source, time: request.time, tenant: request.tenant, input: input,
            requestedElements: request.requestedElements)
    }
}

enum SeedWriter {
    /// Writes `<dir>/<target>/seed-NNNN` for cbor, apple-envelope, annex-c, verify, parsers and fixed-base.
    static func write(to directory: String, vectors: String?) throws {
        var fixture = Fixture.shared
        var corpora: [String: [[UInt8]]] = ["cbor": [], "apple-envelope": [], "annex-c": [], "verify": [], "parsers": [], "fixed-base": [], "transcript": [], "openid4vp": []]
        func add(_ target: String, _ bytes: [UInt8]) { corpora[target]!.append(bytes) }
        func addDeviceResponse(_ response: [UInt8]) {
            let plaintext = CBOR.map([.init("identity", .preEncoded(response))]).encoded()
            add("cbor", response)
            add("annex-c", response)
            add("apple-envelope", plaintext)
            for mode: UInt8 in [1, 2, 3, 4] { add("verify", [mode] + response) }
            // parsers modes (Fuzz/parsers.swift): 0 DeviceResponse, 1 MSO, 2 item content, 4 Apple plaintext.
            add("parsers", [0] + response)
            add("parsers", [4] + plaintext)
            if let parsed = try? DeviceResponse(bytes: response[...]) {
                for document in parsed.documents {
                    if let payload = document.issuerSigned.issuerAuth.payload {
                        add("cbor", Array(payload))
                        add("parsers", [1] + Array(payload))
                    }
                    for space in document.issuerSigned.nameSpaces {
                        for item in space.items {
                            if let content = (try? CBORDecoder().decode(item.taggedBytes))?.tagged?.item.bytes {
                                add("parsers", [2] + Array(content))
                            }
                        }
                    }
                }
            }
        }

        // fixed-base (Fuzz/fixed-base.swift): key, mode, digest length, digest, r, s. A
        // valid signature from the input needs the key's scalar, so the odd
        // (crafted) mode makes those; these seeds give it every key and a
        // spread of digest lengths, and the even mode some r ‖ s to mutate.
        for key: UInt8 in 0..<8 {
            for (mode, length) in [(UInt8(1), UInt8(32)), (0, 32), (1, 0), (1, 48), (0, 20)] {
                var random = TestIssuer.SeededRandom(seed: UInt64(key) << 8 | UInt64(length))
                add("fixed-base", [key, mode, length] + (0..<(Int(length) + 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
        }

        var generated: [TestIssuer.GeneratedEvent] = []
        for flow in Flow.allCases {
            var variants: [TestIssuer.EventOptions] = [TestIssuer.EventOptions()]
            var tagged = TestIssuer.EventOptions()
            tagged.taggedIssuerAuth = true
            tagged.x5chain = .documentSignerAndIACA
            variants.append(tagged)
            if flow == .isoDeviceResponse {
                var mac = TestIssuer.EventOptions()
                mac.deviceMac = true
                variants.append(mac)
            }
            for options in variants { generated.append(try fixture.factory.event(flow, options: options)) }
            for fault in TestIssuer.Fault.allCases where fault.expectedReasons(for: flow) != nil {
                generated.append(try fixture.factory.event(flow, fault: fault))
            }
        }
        for event in generated {
            add("verify", [0] + event.json())
            add("parsers", [3] + event.json())
            let payload = event.payload
            add("cbor", payload)
            add("cbor", event.transcript.encoded)
            add("transcript", event.transcript.encoded)
            switch event.flow {
            case .appleWalletApp: add("apple-envelope", payload)
            case .appleWalletWeb:
                add("annex-c", payload)
                if let info = event.data["encryptionInfo"], let bytes = Data(base64Encoded: base64(fromURL: info)) {
                    add("annex-c", Array(bytes))
                    add("cbor", Array(bytes))
                }
            case .isoDeviceResponse: break
            case .openID4VPDCAPI:
                // openid4vp modes (Fuzz/openid4vp.swift): 0 the event's `data.response` object, 1 a compact JWE.
                if let object = try? JSONParser().parse(event.json()), let response = object["data"]?["response"] {
                    add("openid4vp", [0] + response.jsonBytes())
                }
                add("openid4vp", [1] + payload)
            }
            addDeviceResponse(event.deviceResponse)
        }

        if let vectors, FileManager.default.fileExists(atPath: vectors),
           let walker = FileManager.default.enumerator(atPath: vectors) {
            for case let path as String in walker {
                let url = URL(fileURLWithPath: vectors).appendingPathComponent(path)
                guard let data = try? Data(contentsOf: url), data.count <= 65_536 else { continue }
                var bytes: [UInt8]?
                if path.hasSuffix(".cbor") {
                    bytes = Array(data)
                } else if path.hasSuffix(".hex") {
                    bytes = hex(String(decoding: data, as: UTF8.self))
                }
                if let bytes, !bytes.isEmpty {
                    if path.contains("session_transcript") || path.contains("device_engagement") { add("transcript", bytes) }
                    addDeviceResponse(bytes)
                    add("apple-envelope", bytes)
                }
            }
        }

        for (target, inputs) in corpora {
            let folder = URL(fileURLWithPath: directory).appendingPathComponent(target)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, input) in inputs.enumerated() {
                try Data(input).write(to: folder.appendingPathComponent(String(format: "seed-%04d", index)))
            }
        }
    }

    static func base64(fromURL text: String) -> String {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return standard
    }

    /// Hex seed files (whitespace ignored); nil when not hex.
    static func hex(_ text: String) -> [UInt8]? {
        let digits = text.filter { !$0.isWhitespace }.map(\.hexDigitValue)
        guard digits.count % 2 == 0, !digits.contains(nil) else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(digits[$0]! << 4 | digits[$0 + 1]!) }
    }
}
