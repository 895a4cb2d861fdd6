import Crypto
import Foundation
import MDoc
import Testing
import Verification
import TestSupport

/// Apple's "Verify with Wallet" sample data (README §8), through the
/// apple-wallet-app flow: event parsing, tenant attribution, pkRHash key
/// lookup, transcript rebuild, HPKE, and every document check. The sample is
/// signed under Apple's test root, which only a test tenant trusts: the
/// tenant here is one (developer-profile kind, the root as its test anchor),
/// so its verdicts are test_ ones.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct AppleSampleVectorTests {
    static let folder = "apple-verify-with-wallet-sample"
    static let validAt = instant("2022-04-01T00:00:00Z")
    static let afterExpiry = instant("2026-11-29T00:00:00Z")

    struct Sample {
        let envelope: [UInt8]
        let nonce: [UInt8]
        let merchantID: String
        let teamID: String
        let keyHash: [UInt8]
        let key: PrivateKey
        let root: [Certificate]

        init() throws {
            let parameters = try Vectors.jsonObject("\(folder)/session_transcript_parameters.json")
            envelope = try Vectors.hex("\(folder)/hpke_envelope.hex")
            nonce = hex(parameters["Nonce"] as! String)
            merchantID = parameters["Merchant ID"] as! String
            teamID = parameters["Team ID"] as! String
            keyHash = hex(parameters["Encryption Key Hash"] as! String)
            key = try PrivateKey(pem: Vectors.text("\(folder)/merchant_encryption_key.pem"))
            root = try certificates("\(folder)/issuer_root.pem")
        }

        func tenant(id: String = "acme", merchantIDs: Set<String>? = nil, teamID: String? = nil, key: PrivateKey? = nil,
                    production: Bool = false) throws -> Tenant {
            Tenant(
                id: id, merchantIDs: merchantIDs ?? [merchantID], teamID: teamID ?? self.teamID, keys: [try TenantKey(key ?? self.key)],
                trustAnchors: root, testConditions: production ? nil : TestConditions(kinds: [.developerProfile]))
        }

        func event(tenant: String = "acme", nonce: [UInt8]? = nil, merchantID: String? = nil, payload: [UInt8]? = nil, at time: Date) -> [UInt8] {
            requestEvent(
                tenant: tenant, flow: .appleWalletApp,
                data: ["payload": base64(payload ?? envelope), "nonce": base64(nonce ?? self.nonce), "merchantId": merchantID ?? self.merchantID],
                verifiedAt: time)
        }

        func verify(_ tenant: Tenant, _ event: [UInt8], at time: Date) -> VerificationResult {
            Verifier(directory: TenantDirectory([tenant])).verify(eventJSON: event, at: time)
        }
    }

    @Test func transcriptRebuildsTheSampleBytesAndInfoHash() throws {
        let sample = try Sample()
        #expect(try TenantKey(sample.key).keyHash == sample.keyHash)
        let transcript = SessionTranscript.appleWalletApp(
            nonce: sample.nonce, merchantID: sample.merchantID, teamID: sample.teamID, recipientKeyHash: sample.keyHash)
        #expect(transcript.encoded == (try Vectors.hex("\(Self.folder)/session_transcript.cbor.hex")))
        #expect(sha256(transcript.encoded) == (try Vectors.hex("\(Self.folder)/info_hash.hex")))
        let envelope = try AppleEnvelope(bytes: sample.envelope[...])
        #expect(envelope.infoHash == sha256(transcript.encoded))
        #expect(envelope.recipientKeyHash == sample.keyHash)
    }

    @Test func verifiedWithinTheMSOWindow() throws {
        let sample = try Sample()
        let result = sample.verify(try sample.tenant(), sample.event(at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "test_verified")
        #expect(result.assurance == .test(kind: .developerProfile))
        #expect(result.documents.count == 1)
        #expect(result.documents.first?.docType == "org.iso.18013.5.1.mDL")
        #expect(result.documents.first?.elements.count == 22)
        // The sample's nonce is Apple's, not one Veridoc issued; the nonce store is the worker's.
        // The transcript and reader checks are the proximity flow's; this is the in-app flow.
        // The sample's MSO names no revocation list.
        let notThisFlow: Set<CheckName> = [.requestNonce, .requestIssuedNonce, .payloadTranscript, .payloadReader, .documentStatus, .responseQuery]
        #expect(result.documents.first?.deviceAuthentication == .signature)
        for check in CheckName.allCases where !notThisFlow.contains(check) {
            #expect(result.report.status(of: check) == .passed, "\(check.rawValue)")
        }
    }

    @Test(arguments: [AppleSampleVectorTests.afterExpiry, Date()])
    func rejectedOnlyAsMSOExpiredAfterValidUntil(time: Date) throws {
        let sample = try Sample()
        let result = sample.verify(try sample.tenant(), sample.event(at: time), at: time)
        #expect(result.codes == [.msoExpired], "\(result.summary)")
        #expect(result.verdict == "test_rejected")
        #expect(result.report.status(of: .issuerChain) == .passed)
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
    }

    /// A production tenant that trusts Apple's test root anyway (a Tenant made
    /// in code; a config file listing it does not load) still does not
    /// verify the sample: the path runs through Apple's test issuer.
    @Test func productionTenantTrustingTheTestRootRejectsTheSampleAsUntrusted() throws {
        let sample = try Sample()
        let result = sample.verify(try sample.tenant(production: true), sample.event(at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.issuerUntrusted], "\(result.summary)")
        #expect(result.verdict == "rejected")
        #expect(result.report.reasons.first?.detail.contains("Apple's test issuer \"PassKit Identity Test") == true)
        #expect(result.report.status(of: .issuerAuthority) == .skipped)
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
    }

    /// The simulator parameters: same team and key hash, but "your request"
    /// has its own merchant ID and nonce, which the sample envelope was not made for.
    @Test func simulatorParametersWithYourOwnRequestMismatchTheTranscript() throws {
        let sample = try Sample()
        let simulator = try Vectors.jsonObject("\(Self.folder)/simulator/session_transcript_parameters.json")
        #expect(hex(simulator["Encryption Key Hash"] as! String) == sample.keyHash)
        let merchant = "merchant.com.example.veridoc"
        let tenant = try sample.tenant(merchantIDs: [merchant], teamID: simulator["Team ID"] as? String)
        let nonce = Array(repeating: UInt8(0x5a), count: 32)
        let result = sample.verify(tenant, sample.event(nonce: nonce, merchantID: merchant, at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.decryptionTranscriptMismatch], "\(result.summary)")
        #expect(result.report.status(of: .decryptionKey) == .passed)
        #expect(result.report.status(of: .decryptionOpen) == .skipped)
    }

    @Test func merchantIDOfAnotherTenantIsAnUnknownTenant() throws {
        let sample = try Sample()
        let tenant = try sample.tenant(merchantIDs: ["merchant.com.example.other"])
        let result = sample.verify(tenant, sample.event(at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.eventUnknownTenant], "\(result.summary)")
        #expect(result.report.status(of: .payloadStructure) == .skipped)
    }

    @Test func tenantWithAnotherKeyIsAnUnknownKey() throws {
        let sample = try Sample()
        let tenant = try sample.tenant(key: try PrivateKey.generate(curve: .p256))
        let result = sample.verify(tenant, sample.event(at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.decryptionUnknownKey], "\(result.summary)")
        #expect(result.report.status(of: .payloadStructure) == .passed)
    }

    @Test func tenantWithAnotherTeamIsATranscriptMismatchNamingTheTeam() throws {
        let sample = try Sample()
        let tenant = try sample.tenant(teamID: "ABCDE12345")
        let result = sample.verify(tenant, sample.event(at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.decryptionTranscriptMismatch], "\(result.summary)")
        let detail = try #require(result.report.reasons.first?.detail)
        #expect(detail.contains("teamId differs"))
        #expect(detail.contains("Apple's test team"))
        // The nonce is a secret of the session: never in a reason, in any encoding.
        for secret in [hexString(sample.nonce), hexString(sample.nonce).uppercased(), base64(sample.nonce), Base64URL.encode(sample.nonce)] {
            #expect(!detail.contains(secret))
        }
    }

    /// An app that hands PassKit the nonce's base64 text instead of its bytes.
    /// The sample's own nonce is not text, so the envelope is sealed here to
    /// the sample merchant key with that mistake in its transcript.
    @Test func nonceAsBase64TextIsDiagnosedAsNonceEncoding() throws {
        let sample = try Sample()
        let nonce = Array((0..<32).map { UInt8($0 &* 7 &+ 3) })
        let nonceText = base64(nonce)
        let wrongTranscript = SessionTranscript.appleWalletApp(
            nonce: Array(nonceText.utf8), merchantID: sample.merchantID, teamID: sample.teamID, recipientKeyHash: sample.keyHash)
        let envelope = try AppleEnvelope.seal(
            deviceResponse: try Vectors.hex("\(Self.folder)/device_response.hex"), transcript: wrongTranscript, recipient: sample.key.publicKey)
        let result = sample.verify(try sample.tenant(), sample.event(nonce: nonce, payload: envelope, at: Self.validAt), at: Self.validAt)
        #expect(result.codes == [.decryptionTranscriptMismatch], "\(result.summary)")
        let detail = try #require(result.report.reasons.first?.detail)
        #expect(detail.contains("nonce encoding"))
        #expect(!detail.contains(nonceText))
        #expect(!detail.contains(hexString(nonce)))
    }
}

enum Base64URL {
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(base64(bytes).compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }

    static func decode(_ text: String) -> [UInt8]? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
