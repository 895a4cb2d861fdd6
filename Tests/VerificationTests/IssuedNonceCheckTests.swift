import Foundation
import JSON
import MDoc
import TestIssuer
import Testing
@testable import Verification

/// `request.issued_nonce` and the age check around it, on events the test
/// issuer's wallet answered for nonces issued here: what opens passes and
/// names its session; what does not is `request.nonce_unknown` where the
/// tenant requires issued nonces or the event claims a session; freshness
/// comes from the nonce, not from the event's `time`.
@Suite struct IssuedNonceCheckTests {
    var factory: TestIssuer.EventFactory
    let key = IssuedNonce.Key(replayKey: Array(repeating: 0x5A, count: 32))
    let now: Date

    init() throws {
        now = Date(timeIntervalSince1970: 1_800_000_000)
        factory = try TestIssuer.EventFactory(now: now, seed: 7)
    }

    func verifier(requireIssuedNonces: Bool, key: IssuedNonce.Key?) throws -> Verifier {
        let tenant = try factory.merchant.tenant(trusting: [factory.authority.iaca], requireIssuedNonces: requireIssuedNonces)
        return Verifier(directory: TenantDirectory([tenant]), issuedNonceKey: key)
    }

    func binding(_ flow: Flow, tenant: String? = nil) -> IssuedNonce.Binding {
        let audience = switch flow {
        case .appleWalletApp: factory.merchant.merchantID
        case .appleWalletWeb, .openID4VPDCAPI: factory.merchant.origin
        case .isoDeviceResponse: ""
        }
        return IssuedNonce.Binding(tenant: tenant ?? factory.merchant.tenantID, flow: flow, audience: audience)
    }

    func event(_ data: [String: Any], time: Date) throws -> [UInt8] {
        var data = data
        data["tenant"] = factory.merchant.tenantID
        let event: [String: Any] = [
            "specversion": "1.0", "id": UUID().uuidString, "source": "/tests", "type": VerificationRequest.eventType,
            "time": RFC3339.string(from: time), "datacontenttype": "application/json", "data": data,
        ]
        return Array(try JSONSerialization.data(withJSONObject: event))
    }

    mutating func appEvent(nonce: [UInt8], time: Date? = nil) throws -> [UInt8] {
        let payload = try factory.walletAnswer(appNonce: nonce)
        return try event(["flow": "apple-wallet-app", "payload": Data(payload).base64EncodedString(), "nonce": Data(nonce).base64EncodedString(),
                          "merchantId": factory.merchant.merchantID], time: time ?? now - 5)
    }

    func status(_ result: VerificationResult, _ check: CheckName) -> String? {
        OutcomeEvent(result).json().contains("\"name\":\"\(check.rawValue)\",\"status\":\"passed\"") ? "passed"
            : OutcomeEvent(result).json().contains("\"name\":\"\(check.rawValue)\",\"status\":\"failed\"") ? "failed" : "skipped"
    }

    @Test mutating func anIssuedAppNonceVerifiesAndNamesItsSession() throws {
        let session = UUID()
        let issued = key.issue(session: session, binding: binding(.appleWalletApp), issuedAt: now - 10, lifetime: 120)
        let result = try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: try appEvent(nonce: issued.bytes), at: now)
        #expect(result.isVerified, "\(result.report.reasons.map(\.code))")
        #expect(result.sessionID == session)
        #expect(status(result, .requestIssuedNonce) == "passed")
    }

    @Test mutating func aNonceNotIssuedHereIsUnknownWhereTheTenantRequiresIssuedOnes() throws {
        let own = Array(repeating: UInt8(0x42), count: 32)
        let event = try appEvent(nonce: own)
        let strict = try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: event, at: now)
        #expect(strict.report.reasons.map(\.code) == [.requestNonceUnknown])
        let lenient = try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: event, at: now)
        #expect(lenient.isVerified, "an integrator's own nonce still works where the tenant allows it")
        #expect(status(lenient, .requestIssuedNonce) == "skipped")
        #expect(lenient.sessionID == nil)

        // Issued, but for another tenant, under another key, or altered in one byte.
        let foreign = key.issue(session: UUID(), binding: binding(.appleWalletApp, tenant: "globex"), issuedAt: now - 10, lifetime: 120)
        let otherKey = IssuedNonce.Key(replayKey: Array(repeating: 0x11, count: 32)).issue(
            session: UUID(), binding: binding(.appleWalletApp), issuedAt: now - 10, lifetime: 120)
        var altered = key.issue(session: UUID(), binding: binding(.appleWalletApp), issuedAt: now - 10, lifetime: 120).bytes
        altered[20] ^= 1
        for nonce in [foreign.bytes, otherKey.bytes, altered] {
            let result = try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: try appEvent(nonce: nonce), at: now)
            #expect(result.report.reasons.map(\.code) == [.requestNonceUnknown])
            #expect(result.sessionID == nil)
        }
        // Without the key, a tenant that requires issued nonces cannot be served.
        let keyless = try verifier(requireIssuedNonces: true, key: nil).verify(eventJSON: try appEvent(nonce: foreign.bytes), at: now)
        #expect(keyless.report.reasons.map(\.code) == [.requestNonceUnknown])
    }

    @Test mutating func freshnessComesFromTheNonceNotFromTheEventsTime() throws {
        let expired = key.issue(session: UUID(), binding: binding(.appleWalletApp), issuedAt: now - 300, lifetime: 60)
        let late = try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try appEvent(nonce: expired.bytes, time: now - 1), at: now)
        #expect(late.report.reasons.map(\.code) == [.requestExpired], "a fresh `time` does not revive an expired session")
        let fresh = key.issue(session: UUID(), binding: binding(.appleWalletApp), issuedAt: now - 30, lifetime: 60)
        let stale = try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try appEvent(nonce: fresh.bytes, time: now - 86_400), at: now)
        #expect(stale.isVerified, "an old `time` does not expire a live session: \(stale.report.reasons.map(\.code))")
        let future = key.issue(session: UUID(), binding: binding(.appleWalletApp), issuedAt: now + 120, lifetime: 60)
        #expect(try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try appEvent(nonce: future.bytes), at: now)
            .report.reasons.map(\.code) == [.requestExpired])
    }

    @Test mutating func aWebNonceIsTheOneInEncryptionInfo() throws {
        let session = UUID()
        let issued = key.issue(session: session, binding: binding(.appleWalletWeb), issuedAt: now - 10, lifetime: 120)
        let info = Base64.encodeURL(AnnexCEncryptionInfo.encode(nonce: issued.bytes, recipient: factory.merchant.currentKey.publicKey))
        let response = try factory.walletAnswer(encryptionInfo: info, origin: factory.merchant.origin)
        let json = try event(["flow": "apple-wallet-web", "response": Base64.encodeURL(response), "encryptionInfo": info,
                              "origin": factory.merchant.origin], time: now - 5)
        let result = try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: json, at: now)
        #expect(result.isVerified, "\(result.report.reasons.map(\.code))")
        #expect(result.sessionID == session)
        // The same nonce bound to the app flow does not pass for the web.
        let appBound = key.issue(session: session, binding: binding(.appleWalletApp), issuedAt: now - 10, lifetime: 120)
        let appInfo = Base64.encodeURL(AnnexCEncryptionInfo.encode(nonce: appBound.bytes, recipient: factory.merchant.currentKey.publicKey))
        let crossed = try event(["flow": "apple-wallet-web", "response": Base64.encodeURL(try factory.walletAnswer(encryptionInfo: appInfo, origin: factory.merchant.origin)),
                                 "encryptionInfo": appInfo, "origin": factory.merchant.origin], time: now - 5)
        #expect(try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: crossed, at: now).report.reasons.map(\.code) == [.requestNonceUnknown])
    }

    @Test mutating func anIsoEventCarriesItsSessionToken() throws {
        let session = UUID()
        let token = key.issue(session: session, binding: binding(.isoDeviceResponse), issuedAt: now - 10, lifetime: 120)
        let answer = try factory.readerAnswer()
        func iso(_ token: [UInt8]?) throws -> [UInt8] {
            var data: [String: Any] = ["flow": "iso-device-response", "payload": Data(answer.deviceResponse).base64EncodedString(),
                                       "sessionTranscript": Data(answer.sessionTranscript).base64EncodedString()]
            if let token { data["sessionToken"] = Data(token).base64EncodedString() }
            return try event(data, time: now - 5)
        }
        let result = try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: try iso(token.bytes), at: now)
        #expect(result.isVerified, "\(result.report.reasons.map(\.code))")
        #expect(result.sessionID == session)
        var forged = token.bytes
        forged[44] ^= 0x80
        #expect(try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try iso(forged), at: now).report.reasons.map(\.code)
            == [.requestNonceUnknown], "a token that claims a session is checked whatever the tenant requires")
        #expect(try verifier(requireIssuedNonces: true, key: key).verify(eventJSON: try iso(nil), at: now).report.reasons.map(\.code) == [.requestNonceUnknown])
        #expect(try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try iso(nil), at: now).isVerified)
        // A token of another length is not a token: the event itself is invalid.
        #expect(try verifier(requireIssuedNonces: false, key: key).verify(eventJSON: try iso([1, 2, 3]), at: now).report.reasons.map(\.code) == [.eventInvalid])
    }
}
