import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import TestIssuer
import Testing
import TestSupport
@testable import Verification

/// The openid4vp-dc-api flow on answers the test issuer's wallet made:
/// a session's own key (derived from the nonce Veridoc issued), a tenant key
/// named by its thumbprint, responses in the clear where a tenant allows
/// them, error responses, and the origin, nonce and key of another session.
@Suite struct OpenID4VPFlowTests {
    var factory: TestIssuer.EventFactory
    let key = IssuedNonce.Key(replayKey: Array(repeating: 0x5A, count: 32))
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let otherOrigin = "https://other.example.com"

    init() throws {
        factory = try TestIssuer.EventFactory(now: now, seed: 45)
    }

    /// The merchant's tenant with a second origin of its own, so that the origin can change and the tenant still own it.
    func verifier(requireIssuedNonces: Bool = false, acceptsUnencrypted: Bool = false) throws -> Verifier {
        let merchant = factory.merchant
        let tenant = Tenant(
            id: merchant.tenantID, keys: [try TenantKey(merchant.currentKey)], trustAnchors: [factory.authority.iaca],
            origins: [merchant.origin, Self.otherOrigin], requireIssuedNonces: requireIssuedNonces, acceptsUnencryptedOpenID4VP: acceptsUnencrypted)
        return Verifier(directory: TenantDirectory([tenant]), issuedNonceKey: key)
    }

    func issue(session: UUID = UUID(), origin: String? = nil) -> (nonce: IssuedNonce, text: String) {
        let issued = key.issue(session: session, binding: IssuedNonce.Binding(tenant: factory.merchant.tenantID, flow: .openID4VPDCAPI,
                                                                              audience: origin ?? factory.merchant.origin),
                               issuedAt: now - 10, lifetime: 120)
        return (issued, Base64.encodeURL(issued.bytes))
    }

    static let integratorNonce = "integrators-own-nonce-0123456789"

    func event(origin: String? = nil, nonce: String, response: JSONValue, credentialQueryID: String? = nil) -> [UInt8] {
        var data: JSONObject = ["tenant": .string(factory.merchant.tenantID), "flow": "openid4vp-dc-api", "origin": .string(origin ?? factory.merchant.origin),
                                "nonce": .string(nonce), "response": response]
        if let credentialQueryID { data["credentialQueryId"] = .string(credentialQueryID) }
        let event: JSONObject = ["specversion": "1.0", "id": .string(UUID().uuidString), "source": "/tests", "type": .string(VerificationRequest.eventType),
                                 "time": .string(RFC3339.string(from: now - 5)), "datacontenttype": "application/json", "data": .object(data)]
        return JSONValue.object(event).jsonBytes(keyOrder: .insertion)
    }

    @Test mutating func aSessionsOwnKeyOpensItsResponse() throws {
        let session = UUID()
        let (issued, nonce) = issue(session: session)
        let responseKey = try #require(key.responseKey(for: issued))
        let kid = Base64.encodeURL(try #require(ECJWK.thumbprint(of: responseKey.publicKey)))
        for keyID in [kid, nil] {
            let jwe = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: responseKey.publicKey, keyID: keyID)
            let result = try verifier(requireIssuedNonces: true).verify(eventJSON: event(nonce: nonce, response: ["response": .string(jwe)]), at: now)
            #expect(result.isVerified, "\(result.report.reasons.map(\.detail))")
            #expect(result.sessionID == session)
            #expect(result.report.status(of: .decryptionKey) == .passed)
            #expect(result.replayToken == Array("openid4vp-dc-api\u{0}".utf8) + Array(nonce.utf8))
        }
        // Derived again, the key is the same; another nonce derives another key.
        #expect(key.responseKey(for: issued)?.publicKey.uncompressedPoint == responseKey.publicKey.uncompressedPoint)
        #expect(key.responseKey(for: issue().nonce)?.publicKey.uncompressedPoint != responseKey.publicKey.uncompressedPoint)
    }

    @Test mutating func anotherSessionsNonceOriginOrKeyIsRefused() throws {
        let (issued, nonce) = issue()
        let (otherIssued, otherNonce) = issue()
        let responseKey = try #require(key.responseKey(for: issued))
        let kid = Base64.encodeURL(try #require(ECJWK.thumbprint(of: responseKey.publicKey)))
        let jwe = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: responseKey.publicKey, keyID: kid)
        let verifier = try verifier()
        // Another session's nonce derives another key: the kid names neither it nor a tenant key.
        #expect(verifier.verify(eventJSON: event(nonce: otherNonce, response: ["response": .string(jwe)]), at: now).codes == [.decryptionUnknownKey])
        // The nonce is bound to its origin: under another origin of the tenant it is not Veridoc's, so its key is not derived.
        #expect(verifier.verify(eventJSON: event(origin: Self.otherOrigin, nonce: nonce, response: ["response": .string(jwe)]), at: now).codes
            == [.decryptionUnknownKey])
        // Sealed to another session's key, named as this one's.
        let otherKey = try #require(key.responseKey(for: otherIssued))
        let misdirected = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: otherKey.publicKey, keyID: kid)
        #expect(verifier.verify(eventJSON: event(nonce: nonce, response: ["response": .string(misdirected)]), at: now).codes == [.decryptionFailed])
    }

    /// An integrator's own request, encrypted to a tenant key named by its
    /// thumbprint: the transcript then binds the origin, the nonce and that
    /// key, and the device's signature over it is what fails for another one.
    @Test mutating func aTenantKeyByItsThumbprintAndTheTranscriptItBinds() throws {
        let tenantKey = try TenantKey(factory.merchant.currentKey)
        let nonce = Self.integratorNonce
        let jwe = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: tenantKey.privateKey.publicKey, keyID: tenantKey.keyID)
        let verifier = try verifier()
        let result = verifier.verify(eventJSON: event(nonce: nonce, response: ["response": .string(jwe)]), at: now)
        #expect(result.isVerified, "\(result.report.reasons.map(\.detail))")
        #expect(result.report.status(of: .requestIssuedNonce) == .skipped)
        #expect(verifier.verify(eventJSON: event(nonce: nonce + "x", response: ["response": .string(jwe)]), at: now).codes == [.deviceSignatureInvalid])
        #expect(verifier.verify(eventJSON: event(origin: Self.otherOrigin, nonce: nonce, response: ["response": .string(jwe)]), at: now).codes
            == [.deviceSignatureInvalid])
        // The device signed over another key's thumbprint (the wallet encrypted to one key, bound another).
        let other = try PrivateKey.generate(curve: .p256)
        let rebound = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: other.publicKey, keyID: tenantKey.keyID)
        #expect(verifier.verify(eventJSON: event(nonce: nonce, response: ["response": .string(rebound)]), at: now).codes == [.decryptionFailed])
        // Where the tenant requires issued nonces, the integrator's own is unknown.
        #expect(try self.verifier(requireIssuedNonces: true).verify(eventJSON: event(nonce: nonce, response: ["response": .string(jwe)]), at: now).codes
            == [.requestNonceUnknown])
    }

    @Test mutating func aResponseInTheClearOnlyWhereTheTenantAcceptsIt() throws {
        let clear = try factory.event(.openID4VPDCAPI, fault: .unsupportedFormat)
        let strict = try verifier().verify(eventJSON: clear.json(), at: factory.now)
        #expect(strict.codes == [.payloadUnsupported])
        let lenient = try verifier(acceptsUnencrypted: true).verify(eventJSON: clear.json(), at: factory.now)
        #expect(lenient.isVerified, "\(lenient.report.reasons.map(\.detail))")
        #expect(lenient.report.status(of: .decryptionOpen) == .skipped)
    }

    @Test mutating func walletErrorsAreTheWalletsAnswer() throws {
        let verifier = try verifier()
        let errors: [(JSONValue, String)] = [(["error": "access_denied", "error_description": "The user said no"], "access_denied"),
                                             (["error": "bad code with spaces"], "non_standard_error")]
        for (response, code) in errors {
            let result = verifier.verify(eventJSON: event(nonce: Self.integratorNonce, response: response), at: now)
            #expect(result.codes == [.responseWalletError])
            let detail = try #require(result.report.reasons.first?.detail)
            #expect(detail.contains(code) && !detail.contains("said no") && !detail.contains("spaces"))
        }
        // An error response sealed in the JWE is the same answer.
        let tenantKey = try TenantKey(factory.merchant.currentKey)
        let sealed = try CompactJWE.seal(Array(#"{"error":"invalid_request"}"#.utf8), to: tenantKey.privateKey.publicKey, keyID: tenantKey.keyID)
        let result = verifier.verify(eventJSON: event(nonce: Self.integratorNonce, response: ["response": .string(sealed)]), at: now)
        #expect(result.codes == [.responseWalletError])
        #expect(result.report.reasons.first?.detail.contains("invalid_request") == true)
    }

    /// Where the event names the query's credential id, the vp_token must
    /// answer under it, encrypted or in the clear; an id that is not DCQL's,
    /// or a nonce too short to be random, is not an event of this flow.
    @Test mutating func theVPTokenAnswersTheQueryTheEventNames() throws {
        let tenantKey = try TenantKey(factory.merchant.currentKey)
        let nonce = Self.integratorNonce
        let jwe = try factory.walletAnswer(openID4VPNonce: nonce, origin: factory.merchant.origin, responseKey: tenantKey.privateKey.publicKey,
                                           keyID: tenantKey.keyID, credentialQueryID: "id_card-1")
        let verifier = try verifier()
        let response: JSONValue = ["response": .string(jwe)]
        let named = verifier.verify(eventJSON: event(nonce: nonce, response: response, credentialQueryID: "id_card-1"), at: now)
        #expect(named.isVerified, "\(named.report.reasons.map(\.detail))")
        #expect(verifier.verify(eventJSON: event(nonce: nonce, response: response), at: now).isVerified, "no id named: any one id")
        for other in ["mdoc", "id_card-2", "ID_CARD-1", "id_card-10"] {
            let result = verifier.verify(eventJSON: event(nonce: nonce, response: response, credentialQueryID: other), at: now)
            #expect(result.codes == [.payloadMalformed], "\(other)")
        }
        let clear: JSONValue = ["vp_token": ["id_card-1": ["AAAA"]]]
        #expect(try self.verifier(acceptsUnencrypted: true).verify(eventJSON: event(nonce: nonce, response: clear, credentialQueryID: "mdoc"), at: now).codes
            == [.payloadMalformed])
        for invalid in ["", "a b", "a.b", "é", String(repeating: "a", count: 257)] {
            #expect(verifier.verify(eventJSON: event(nonce: nonce, response: response, credentialQueryID: invalid), at: now).codes == [.eventInvalid], "\(invalid)")
        }
        #expect(verifier.verify(eventJSON: event(nonce: String(nonce.prefix(15)), response: response), at: now).codes == [.eventInvalid])
        #expect(verifier.verify(eventJSON: event(nonce: String(nonce.prefix(16)), response: response), at: now).codes == [.deviceSignatureInvalid],
                "16 bytes is a nonce; this one is not the one the device signed")
    }

    @Test func malformedResponsesAreEventOrPayloadRejections() throws {
        let verifier = try verifier(acceptsUnencrypted: true)
        let invalid: [JSONValue] = ["a string", ["response": "x", "vp_token": [:]], ["response": 5], ["vp_token": "x"], [:], ["other": "x"]]
        for response in invalid {
            #expect(verifier.verify(eventJSON: event(nonce: Self.integratorNonce, response: response), at: now).codes == [.eventInvalid], "\(response)")
        }
        let malformed: [JSONValue] = [
            ["vp_token": [:]], ["vp_token": ["a": ["AAAA"], "b": ["AAAA"]]], ["vp_token": ["a": []]], ["vp_token": ["a": ["AAAA", "AAAA"]]],
            ["vp_token": ["a": "AAAA"]], ["vp_token": ["a": ["!!"]]], ["response": "a.b.c"], ["response": "not a jwe"],
        ]
        for response in malformed {
            #expect(verifier.verify(eventJSON: event(nonce: Self.integratorNonce, response: response), at: now).codes == [.payloadMalformed], "\(response)")
        }
    }

    /// The OpenID4VP 1.0 DC API transcript, spelt out byte by byte here
    /// rather than through the CBOR encoder that builds it.
    @Test func theDCAPITranscriptIsTheSpecifiedBytes() throws {
        let origin = "https://shop.example.com", nonce = "abc", thumbprint = [UInt8](repeating: 7, count: 32)
        // Major type 3; a length of 24 to 255 takes one byte after 0x78.
        func text(_ value: String) -> [UInt8] {
            let count = value.utf8.count
            return (count < 24 ? [0x60 | UInt8(count)] : [0x78, UInt8(count)]) + Array(value.utf8)
        }
        let info: [UInt8] = [0x83] + text(origin) + text(nonce) + [0x58, 0x20] + thumbprint
        let handoverName = Array("OpenID4VPDCAPIHandover".utf8)
        let expected: [UInt8] = [0x83, 0xF6, 0xF6, 0x82, 0x76] + handoverName + [0x58, 0x20] + sha256(info)
        #expect(SessionTranscript.openID4VPDigitalCredentialsAPI(origin: origin, nonce: nonce, jwkThumbprint: thumbprint).encoded == expected)
        let clearInfo: [UInt8] = [0x83] + text(origin) + text(nonce) + [0xF6]
        #expect(SessionTranscript.openID4VPDigitalCredentialsAPI(origin: origin, nonce: nonce, jwkThumbprint: nil).encoded
            == [0x83, 0xF6, 0xF6, 0x82, 0x76] + handoverName + [0x58, 0x20] + sha256(clearInfo))
    }
}

/// The public OpenID4VP vectors' transcripts, rebuilt from their handover
/// inputs by the flow's transcript code (README §3): the same bytes the
/// devices signed, which `AnimoVectorTests` verifies them under.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct OpenID4VPVectorTranscriptTests {
    static func inputs(_ folder: String) throws -> [String: String] {
        let object = try #require(try JSONParser().parse(Array(try Vectors.text("animo-mdoc/\(folder)/handover_inputs.json").utf8)).objectValue)
        var strings: [String: String] = [:]
        for member in object.members { strings[member.key] = member.value.stringValue }
        return strings
    }

    @Test func openID4VP1RedirectHandover() throws {
        let inputs = try Self.inputs("animo-oid4vp-1.0")
        let thumbprint = hex(try #require(inputs["jwk_thumbprint_hex"]))
        let transcript = SessionTranscript.openID4VP(handover: "OpenID4VPHandover", hashing: [
            .text(try #require(inputs["client_id"])), .text(try #require(inputs["nonce"])), .bytes(thumbprint), .text(try #require(inputs["response_uri"])),
        ])
        #expect(transcript.encoded == (try Vectors.hex("animo-mdoc/animo-oid4vp-1.0/session_transcript.cbor.hex")))
    }

    @Test func digitalCredentialsAPIDraft24Handover() throws {
        let inputs = try Self.inputs("google-dcapi-oid4vp-draft24")
        let transcript = SessionTranscript.openID4VP(handover: "OpenID4VPDCAPIHandover", hashing: [
            .text(try #require(inputs["origin"])), .text(try #require(inputs["client_id"])), .text(try #require(inputs["nonce"])),
        ])
        #expect(transcript.encoded == (try Vectors.hex("animo-mdoc/google-dcapi-oid4vp-draft24/session_transcript.cbor.hex")))
    }
}
