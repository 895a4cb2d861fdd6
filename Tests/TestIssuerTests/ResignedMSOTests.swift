import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// MSOs with hostile or unusual contents, correctly signed by the trusted
/// document signer, so that only the MSO checks can object.
@Suite struct ResignedMSOTests {
    /// An iso-device-response event whose MSO was edited by `edit` and re-signed.
    static func event(editingMSO edit: (CBOR) -> CBOR) throws -> (TestIssuer.GeneratedEvent, Verifier) {
        var factory = try Fixtures.factory(seed: 500)
        let verifier = try factory.verifier()
        let event = try factory.event(.isoDeviceResponse)
        let issued = try factory.authority.issue(
            factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: TestIssuer.IssuanceOptions(now: Fixtures.now), using: &factory.random)
        var options = TestIssuer.IssuanceOptions(now: Fixtures.now)
        // Take the MSO the authority built, edit it, and have the authority sign the result.
        let auth = try COSESign1(try CBORDecoder().decode(issued.issuerAuth.encoded()), context: "test")
        let mso = try CBORDecoder().decode(try #require(auth.payload)).decodeEmbedded("MSO").value
        options.payloadOverride = CBOR.embedded(edit(mso)).encoded()
        var resigned = try factory.authority.issue(
            factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: options, using: &factory.random)
        resigned.nameSpaces = issued.nameSpaces
        let document = try factory.holder.present(resigned, transcript: event.transcript)
        return (event.replacingPayload(TestIssuer.deviceResponse(documents: [document])), verifier)
    }

    static func validity(_ signed: String, _ from: String, _ until: String) -> (CBOR) -> CBOR {
        { mso in mso.replacing("validityInfo", with: ["signed": .tagged(0, .text(signed)), "validFrom": .tagged(0, .text(from)), "validUntil": .tagged(0, .text(until))]) }
    }

    @Test("an unedited re-signed MSO verifies (the harness itself is sound)")
    func harness() throws {
        let (event, verifier) = try Self.event { $0 }
        #expect(Fixtures.verify(event, with: verifier).codes == [])
    }

    @Test("extreme but well-formed validity dates are reported, never crash")
    func extremeDates() throws {
        let cases: [(String, String, String, [ReasonCode])] = [
            ("2025-06-15T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", []),
            ("2025-06-15T00:00:00Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", [.msoNotYetValid]),
            ("2025-06-15T00:00:00Z", "0000-01-01T00:00:00Z", "0000-01-02T00:00:00Z", [.msoExpired]),
            ("2025-06-15T00:00:00.9999Z", "2025-06-14T23:59:59.9999+23:59", "2025-07-14T00:00:00.5-23:59", []),
            ("2025-06-15T00:00:00Z", "2025-02-30T00:00:00Z", "2025-07-14T00:00:00Z", [.msoMalformed]),
            ("2025-06-15T00:00:00Z", "2025-06-14 00:00:00Z", "2025-07-14T00:00:00Z", [.msoMalformed]),
        ]
        for (signed, from, until, expected) in cases {
            let (event, verifier) = try Self.event(editingMSO: Self.validity(signed, from, until))
            let result = Fixtures.verify(event, with: verifier)
            #expect(result.codes == expected, "\(from) … \(until): \(result.report.reasons.map(\.detail))")
            _ = OutcomeEvent(result).json()
        }
    }

    @Test("an MSO device key the verifier cannot use is rejected in the MSO check")
    func unusableDeviceKeys() throws {
        let keys: [(String, CBOR)] = [
            ("off-curve point", [1: 2, -1: 1, -2: .bytes([UInt8](repeating: 1, count: 32)), -3: .bytes([UInt8](repeating: 2, count: 32))]),
            ("RSA key type", [1: 3, -1: .bytes([1, 0, 1]), -2: .bytes([1, 0, 1])]),
            ("no key at all", [:]),
        ]
        for (name, key) in keys {
            let (event, verifier) = try Self.event { $0.replacing("deviceKeyInfo", with: ["deviceKey": key]) }
            let codes = Fixtures.verify(event, with: verifier).codes
            #expect(codes == [.msoMalformed] || codes == [.payloadUnsupported], "\(name): \(codes)")
        }
    }

    /// Schemas/reason-codes.md: `mso.malformed` covers an MSO whose "digest
    /// algorithm is unsupported", even when the issuer signed it correctly.
    @Test("an unsupported MSO digest algorithm is mso.malformed, as reason-codes.md documents")
    func unsupportedDigestAlgorithm() throws {
        let (event, verifier) = try Self.event { $0.replacing("digestAlgorithm", with: "SHA-1") }
        let result = Fixtures.verify(event, with: verifier)
        #expect(result.codes == [.msoMalformed])
        #expect(!result.isVerified)
    }
}
