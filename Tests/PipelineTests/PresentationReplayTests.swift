import CBOR
import Foundation
import MDoc
import Testing
import TestIssuer
import TestSupport
import Verification

/// One presentation is accepted once in the whole deployment, through the
/// real worker, broker and PostgreSQL: again at another tenant, or with its
/// transcript re-encoded, it is `request.nonce_reused`, and the replay's
/// detail names neither the other event nor the other tenant.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct PresentationReplayTests {
    /// The fixture's config with a second tenant, `globex`, sharing acme's
    /// trust and keys (as a test tenant shares its production twin's).
    static func addingGlobex(_ fixture: PipelineFixture) throws {
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as! [String: Any]
        var tenants = root["tenants"] as! [[String: Any]]
        var globex = tenants[0]
        globex["id"] = "globex"
        globex["merchantIds"] = ["merchant.com.example.globex"]
        globex["origins"] = ["https://globex.example.com"]
        tenants.append(globex)
        root["tenants"] = tenants
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: fixture.config)
    }

    /// The event with its device signature carrying DeviceAuthentication as an
    /// attached payload (the signed bytes do not change, so it still verifies)
    /// and its transcript's array head re-encoded in a longer form (`98 03`
    /// for `83`): the same session, other bytes. What anyone who saw the
    /// presentation can do with it.
    static func reencoded(_ event: TestIssuer.GeneratedEvent, id: String) throws -> TestIssuer.GeneratedEvent {
        let text = try #require(event.data["sessionTranscript"])
        let transcript = Array(try #require(Data(base64Encoded: text)))
        #expect(transcript.first == 0x83)
        let longer = [0x98, 0x03] + transcript.dropFirst()
        let response = try DeviceResponse(bytes: event.payload[...])
        let document = try #require(response.documents.first)
        let deviceSigned = try #require(document.deviceSigned)
        let attached = DeviceAuthentication.bytes(
            transcript: try SessionTranscript(received: transcript), docType: document.docType, nameSpacesBytes: deviceSigned.nameSpacesBytes)
        var value = try CBORDecoder().decode(event.payload).value
        value = try Self.settingSignaturePayload(value, to: attached)
        var copy = event.replacingPayload(value.encoded())
        copy.data["sessionTranscript"] = Data(longer).base64EncodedString()
        copy.attributes["id"] = id
        copy.signAsReader()
        return copy
    }

    /// documents[0].deviceSigned.deviceAuth.deviceSignature[2] = bstr(payload).
    static func settingSignaturePayload(_ response: CBOR, to payload: [UInt8]) throws -> CBOR {
        func edit(_ map: CBOR, _ key: String, _ change: (CBOR) throws -> CBOR) throws -> CBOR {
            guard case .map(let entries) = map else { throw TestFailure("\(key): not a map") }
            return .map(try entries.map { entry in entry.key == .text(key) ? CBOR.MapEntry(entry.key, try change(entry.value)) : entry })
        }
        return try edit(response, "documents") { documents in
            guard case .array(var list) = documents else { throw TestFailure("documents") }
            list[0] = try edit(list[0], "deviceSigned") { signed in
                try edit(signed, "deviceAuth") { auth in
                    try edit(auth, "deviceSignature") { signature in
                        guard case .array(var parts) = signature, parts.count == 4 else { throw TestFailure("deviceSignature") }
                        parts[2] = .bytes(payload)
                        return .array(parts)
                    }
                }
            }
            return .array(list)
        }
    }

    @Test func aPresentationIsAcceptedOnceAcrossTenantsAndEncodings() throws {
        let fixture = try PipelineFixture()
        try Self.addingGlobex(fixture)
        let original = try fixture.factory.event(.isoDeviceResponse)
        // Without the worker: each variant verifies on its own, so only the single-use check can stop it.
        var atGlobex = original
        atGlobex.data["tenant"] = "globex"
        atGlobex.attributes["id"] = "replay-at-globex-\(UUID().uuidString)"
        let reencoded = try Self.reencoded(original, id: "replay-reencoded-\(UUID().uuidString)")
        let verifier = Verifier(directory: try Configuration.load(from: fixture.config).directory)
        for variant in [original, atGlobex, reencoded] {
            let result = verifier.verify(eventJSON: variant.json(), at: Date())
            #expect(result.isVerified, "\(variant.id!): \(result.report.reasons.map { "\($0.code.rawValue): \($0.detail)" })")
        }

        let worker = try fixture.startWorker()
        try fixture.produce([("k1", original.json())])
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 1 }, "\(worker.log.suffix(1500))")
        try fixture.produce([("k2", atGlobex.json()), ("k3", reencoded.json())])
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 3 }, "\(worker.log.suffix(1500))")
        let stored = try fixture.database.results()
        #expect(stored[original.id!]?.verdict == "verified")
        #expect(stored[atGlobex.id!]?.reasons == ["request.nonce_reused"], "another tenant")
        #expect(stored[reencoded.id!]?.reasons == ["request.nonce_reused"], "a re-encoded transcript")
        // The replay's outcome says what was reused, and names neither the first event nor its tenant.
        let outcomes = try fixture.outcomeEvents(expected: 3)
        let replayEvent = try #require(outcomes.first { $0["subject"] as? String == atGlobex.id! })
        let replayOutcome = String(decoding: try JSONSerialization.data(withJSONObject: replayEvent), as: UTF8.self)
        #expect(replayOutcome.contains("this presentation"))
        #expect(!replayOutcome.contains(original.id!) && !replayOutcome.contains("acme"))
        // Two tenant-scoped nonce rows would not have caught it: the deployment-wide row did.
        #expect(try fixture.database.count("SELECT count(*) AS count FROM nonces WHERE tenant = ''") == 1)
        #expect(worker.terminate() == 0)
    }
}
