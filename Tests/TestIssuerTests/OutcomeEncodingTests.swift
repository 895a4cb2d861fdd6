import Crypto
import Foundation
import JSON
import MDoc
import Testing
import TestSupport
import TestIssuer
import Verification

/// The outcome is written by the JSON module now; it must be the bytes
/// JSONSerialization (`.sortedKeys`, `.withoutEscapingSlashes`) wrote before,
/// for verified and rejected results, with and without sealed claims.
@Suite struct OutcomeEncodingTests {
    static func assertFoundationWouldWriteTheSame(_ outcome: OutcomeEvent, _ context: String) throws {
        let value = outcome.jsonValue
        let foundation = try JSONSerialization.data(withJSONObject: foundationObject(value), options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(value.jsonString() == String(decoding: foundation, as: UTF8.self), "\(context)")
        let reread = try JSONParser().parse(Array(foundation))
        #expect(reread == value, "\(context)")
        // `encoded()` writes without the tree: the same bytes, except that sealed
        // claims carry a fresh ephemeral key on every call.
        let streamed = outcome.encoded()
        #expect(streamed.hasClaims == (value["data"]?["claims"] != nil), "\(context)")
        if streamed.hasClaims {
            var streamedValue = try JSONParser().parse(Array(streamed.json.utf8))
            #expect(streamedValue["data"]?["claims"]?["enc"] != value["data"]?["claims"]?["enc"], "\(context)")
            #expect(Self.withoutClaims(&streamedValue) == Self.withoutClaims(value), "\(context)")
            #expect(streamedValue.jsonString() == Self.withoutClaims(value).jsonString(), "\(context)")
        } else {
            #expect(streamed.json == value.jsonString(), "\(context)")
        }
    }

    static func withoutClaims(_ value: JSONValue) -> JSONValue {
        var copy = value
        return withoutClaims(&copy)
    }

    @discardableResult
    static func withoutClaims(_ value: inout JSONValue) -> JSONValue {
        guard case .object(var event) = value, case .object(var data)? = event["data"] else { return value }
        data["claims"] = nil
        event["data"] = .object(data)
        value = .object(event)
        return value
    }

    @Test("outcomes are byte-identical to JSONSerialization's", arguments: Flow.allCases)
    func verified(_ flow: Flow) throws {
        var factory = try Fixtures.factory(seed: 310)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.requestedElements = [
            RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "family_name", retention: .mayStore(days: 30)),
            RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "given_name", retention: .mayStore(days: nil)),
            RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "birth_date", retention: .willNotStore),
        ]
        let result = Fixtures.verify(try factory.event(flow, options: options), with: verifier)
        #expect(result.isVerified)
        try Self.assertFoundationWouldWriteTheSame(OutcomeEvent(result), flow.rawValue)

        let recipient = try PrivateKey.generate(curve: .p256)
        let sealed = OutcomeEvent(result, claimsRecipient: recipient.publicKey)
        let encoded = sealed.encoded()
        #expect(encoded.hasClaims)
        try Self.assertFoundationWouldWriteTheSame(sealed, "\(flow.rawValue) with claims")
        let claims = try #require(try JSONParser().parse(encoded.json)["data"]?["claims"]?.objectValue)
        #expect(claims.keys.sorted() == ["ciphertext", "contentType", "enc", "suite"])
        let foundationClaims = try #require(
            (try JSONSerialization.jsonObject(with: Data(encoded.json.utf8)) as? [String: Any])?["data"] as? [String: Any])["claims"] as? [String: Any]
        let plaintext = try OutcomeClaims.open(try #require(foundationClaims), requestID: try #require(result.requestID), recipient: recipient)
        #expect(plaintext == OutcomeClaims.plaintext(of: result))
        #expect(!OutcomeEvent(result).encoded().hasClaims)
    }

    @Test("rejected outcomes: nulls where Foundation had NSNull", arguments: TestIssuer.Fault.allCases)
    func rejected(_ fault: TestIssuer.Fault) throws {
        var factory = try Fixtures.factory(seed: 311)
        for (flow, result) in try Fixtures.verifyEach(fault, from: &factory) {
            try Self.assertFoundationWouldWriteTheSame(OutcomeEvent(result), "\(fault) \(flow.rawValue)")
        }
    }

    @Test func unparseableEventStillEncodes() throws {
        let factory = try Fixtures.factory(seed: 312)
        let verifier = try factory.verifier()
        let result = verifier.verify(eventJSON: Array("{\"id\": \"x\", \"data\": 1".utf8), at: Fixtures.now)
        let value = OutcomeEvent(result).jsonValue
        #expect(OutcomeEvent(result).encoded().json == value.jsonString())
        #expect(value["data"]?["tenant"] == .null)
        #expect(value["data"]?["flow"] == .null)
        #expect(value["data"]?["document"] == .null)
        try Self.assertFoundationWouldWriteTheSame(OutcomeEvent(result), "unparseable")
    }
}
