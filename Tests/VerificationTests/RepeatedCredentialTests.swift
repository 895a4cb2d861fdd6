import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// A credential presented again skips the issuer's ECDSA through the memo
/// of verified signatures, and nothing else: the digests, the issuer
/// signature of altered bytes, the device signature and the session are
/// checked on every presentation; and only document signers that chain to
/// the tenant's IACA are remembered.
@Suite struct RepeatedCredentialTests {
    static func memoEntry(_ event: TestIssuer.GeneratedEvent) throws -> VerifiedSignatureMemo.Entry {
        let issuerAuth = try #require(try DeviceResponse(bytes: event.deviceResponse[...]).documents.first).issuerSigned.issuerAuth
        let key = try #require(try issuerAuth.x5chain(context: "test").first).publicKey()
        return VerifiedSignatureMemo.Entry(
            digest: HashAlgorithm.sha256.hash(issuerAuth.toBeSigned()), signature: Array(issuerAuth.signature), point: try #require(key.uncompressedPoint))
    }

    static func reasons(_ result: VerificationResult) -> [String] { result.report.reasons.map(\.code.rawValue) }

    @Test func aRepeatIsAnsweredFromTheMemoAndEverythingElseIsStillChecked() throws {
        var factory = try TestIssuer.EventFactory(now: Date(), seed: 4_104)
        let verifier = try factory.verifier()
        let first = try factory.event(.appleWalletApp)
        var again = TestIssuer.EventOptions()
        again.presentAgain = true
        let repeated = try factory.event(.appleWalletApp, options: again)
        #expect(try Self.memoEntry(first).fingerprintMatches(Self.memoEntry(repeated)), "the same issuerAuth is presented again")

        #expect(verifier.verify(eventJSON: first.json(), at: factory.now).isVerified)
        #expect(TrustedSignatures.shared.memo.contains(try Self.memoEntry(first)), "a trusted signer's signature is remembered")
        #expect(verifier.verify(eventJSON: repeated.json(), at: factory.now).isVerified)

        // The remembered credential, altered after issuance, or presented in another session.
        for (fault, expected) in [(TestIssuer.Fault.alteredElement, "mso.digest_mismatch"), (.flippedIssuerSignature, "issuer.signature_invalid"),
                                  (.deviceSignedOtherTranscript, "device.signature_invalid"), (.wrongNonce, "decryption.transcript_mismatch")] {
            let event = try factory.event(.appleWalletApp, options: again, fault: fault)
            let result = verifier.verify(eventJSON: event.json(), at: factory.now)
            #expect(Self.reasons(result) == [expected], "\(fault): \(Self.reasons(result))")
        }
    }

    @Test func anUntrustedSignerIsNotRemembered() throws {
        var factory = try TestIssuer.EventFactory(now: Date(), seed: 4_105)
        let verifier = try factory.verifier()
        let untrusted = try factory.event(.isoDeviceResponse, fault: .untrustedIssuer)
        let result = verifier.verify(eventJSON: untrusted.json(), at: factory.now)
        #expect(Self.reasons(result) == ["issuer.untrusted"])
        #expect(result.report.checks.contains { $0.name == .issuerSignature && $0.status == .passed }, "its signature is still checked, the ordinary way")
        #expect(!TrustedSignatures.shared.memo.contains(try Self.memoEntry(untrusted)))
    }
}

extension VerifiedSignatureMemo.Entry {
    /// Whether two entries stand for the same verification (a memo of one, asked for the other).
    func fingerprintMatches(_ other: VerifiedSignatureMemo.Entry) -> Bool {
        let memo = VerifiedSignatureMemo(capacity: 1)
        memo.remember(self)
        return memo.contains(other)
    }
}
