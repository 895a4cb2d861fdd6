import Crypto
import Foundation
import MDoc
import Testing
import Verification
import TestSupport

/// ISO/IEC 18013-7 Annex C vectors (README §5) through the apple-wallet-web flow.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct AnnexCVectorTests {
    struct Capture {
        let origin: String
        let encryptionInfo: String
        let response: String
        let key: PrivateKey
        let expectedTranscriptHash: [UInt8]

        init(_ folder: String) throws {
            let vector = try Vectors.jsonObject("iso18013-7-annex-c/\(folder)/vector.json")
            origin = try #require(vector["origin"] as? String)
            encryptionInfo = try #require(vector["encryptionInfoB64"] as? String)
            response = try #require(vector["encryptedResponseB64"] as? String)
            key = try PrivateKey(curve: .p256, scalar: hex(try #require(vector["recipientPrivateKeyHex"] as? String)))
            let expected = try #require(vector["expected"] as? [String: Any])
            expectedTranscriptHash = hex(try #require(expected["sessionTranscriptCborSha256Hex"] as? String))
        }

        func verify(at time: Date) throws -> VerificationResult {
            // Any certificate will do as the anchor: these responses never reach the issuer checks.
            let anchors = try certificates("synthetic-pymdoccbor/iaca.pem")
            let tenant = Tenant(id: "web", keys: [try TenantKey(key)], trustAnchors: anchors, origins: [origin])
            let event = requestEvent(
                tenant: "web", flow: .appleWalletWeb, data: ["response": response, "encryptionInfo": encryptionInfo, "origin": origin], verifiedAt: time)
            return Verifier(directory: TenantDirectory([tenant])).verify(eventJSON: event, at: time)
        }
    }

    @Test(arguments: ["walt-id-deterministic-001", "multipaz-capture-real-001"])
    func transcriptRuleReproducesTheVector(folder: String) throws {
        let capture = try Capture(folder)
        let transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: capture.encryptionInfo, origin: capture.origin)
        #expect(transcript.encoded == (try Vectors.hex("iso18013-7-annex-c/\(folder)/session_transcript.cbor.hex")))
        #expect(sha256(transcript.encoded) == capture.expectedTranscriptHash)
    }

    @Test func waltIDDecryptsToAResponseWithoutDocuments() throws {
        let result = try Capture("walt-id-deterministic-001").verify(at: instant("2026-11-29T13:07:18Z"))
        #expect(result.codes == [.responseNoDocuments], "\(result.summary)")
        #expect(result.report.status(of: .decryptionOpen) == .passed)
        #expect(result.documents.isEmpty)
    }

    /// The capture's `recipientPrivateKeyHex` is a placeholder that is not the
    /// key of EncryptionInfo.recipientPublicKey: the tenant holds no key for it.
    @Test func multipazCaptureHasNoMatchingTenantKey() throws {
        let capture = try Capture("multipaz-capture-real-001")
        let info = try AnnexCEncryptionInfo(bytes: Base64URL.decode(capture.encryptionInfo)![...])
        #expect(info.recipientPublicKey.uncompressedPoint != capture.key.publicKey.uncompressedPoint)

        let result = try capture.verify(at: instant("2025-12-15T09:00:00Z"))
        #expect(result.codes == [.decryptionUnknownKey], "\(result.summary)")
        #expect(result.report.status(of: .payloadStructure) == .passed)
        for check in CheckName.allCases where check > .decryptionKey && check < .requestAge {
            #expect(result.report.status(of: check) == .skipped, "\(check.rawValue)")
        }
        #expect(result.documents.isEmpty)
    }
}

/// The synthetic pymdoccbor corpus (README §7), pinned at its generation time + 1 h.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct SyntheticVectorTests {
    static let folder = "synthetic-pymdoccbor"
    static let at = instant("2026-11-29T13:07:18Z")

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let anchor: String
        let codes: [ReasonCode]
        var testDescription: String { name }
    }

    static let plain: [Case] = [
        Case(name: "valid-es256-oid4vp", anchor: "iaca.pem", codes: []),
        Case(name: "valid-es384-ds-sha384", anchor: "iaca.pem", codes: []),
        Case(name: "neg-tampered-family-name", anchor: "iaca.pem", codes: [.msoDigestMismatch]),
        Case(name: "neg-doctype-mismatch", anchor: "iaca.pem", codes: [.msoDoctypeMismatch]),
        Case(name: "neg-wrong-session-transcript", anchor: "iaca.pem", codes: [.deviceSignatureInvalid]),
        Case(name: "neg-untrusted-iaca", anchor: "iaca_unrelated.pem", codes: [.issuerUntrusted]),
        // Attached DeviceAuthenticationBytes equal to the expected ones are accepted.
        Case(name: "policy-attached-device-payload", anchor: "iaca.pem", codes: []),
    ]

    @Test(arguments: plain)
    func plainDeviceResponse(_ vector: Case) throws {
        let result = try verifyISOFolder("\(Self.folder)/\(vector.name)", anchors: certificates("\(Self.folder)/\(vector.anchor)"), at: Self.at)
        #expect(result.codes == vector.codes, "\(result.summary)")
        #expect(result.verdict == (vector.codes.isEmpty ? "verified" : "rejected"))
        let expected = try Vectors.jsonObject("\(Self.folder)/\(vector.name)/expected.json")
        #expect(expected["overall_valid"] as? Bool == vector.codes.isEmpty)
    }

    @Test func tamperedFamilyNameIsNamed() throws {
        let result = try verifyISOFolder("\(Self.folder)/neg-tampered-family-name", anchors: certificates("\(Self.folder)/iaca.pem"), at: Self.at)
        #expect(result.report.reasons.first?.detail.hasSuffix("org.iso.18013.5.1/family_name") == true, "\(result.summary)")
    }

    /// The synthetic Annex C response, verified as if it arrived from `origin`
    /// (nil: the vector's own origin). The tenant accepts both origins.
    static func annexC(origin override: String? = nil) throws -> VerificationResult {
        let vector = try Vectors.jsonObject("\(Self.folder)/annex-c-dcapi-hpke/annex_c.json")
        let vectorOrigin = try #require(vector["origin"] as? String)
        let origin = override ?? vectorOrigin
        let key = try PrivateKey(curve: .p256, scalar: hex(try #require(vector["recipientPrivateKeyHex"] as? String)))
        #expect(key.publicKey.uncompressedPoint == hex(try #require(vector["recipientPublicKeyHex"] as? String)))
        let tenant = Tenant(
            id: "web", keys: [try TenantKey(key)], trustAnchors: try certificates("\(Self.folder)/iaca.pem"),
            origins: [vectorOrigin, "https://other.example"])
        let event = requestEvent(tenant: "web", flow: .appleWalletWeb, data: [
            "response": try #require(vector["encryptedResponseB64u"] as? String),
            "encryptionInfo": try #require(vector["encryptionInfoB64u"] as? String),
            "origin": origin,
        ], verifiedAt: Self.at)
        return Verifier(directory: TenantDirectory([tenant])).verify(eventJSON: event, at: Self.at)
    }

    @Test func annexCDCAPIHPKE() throws {
        let result = try Self.annexC()
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "verified")
        #expect(result.report.status(of: .decryptionOpen) == .passed)
    }

    /// Another origin of the same tenant gives another transcript, so HPKE
    /// (whose info is the transcript) cannot open the response.
    @Test func annexCFromAnotherOriginDoesNotDecrypt() throws {
        let result = try Self.annexC(origin: "https://other.example")
        #expect(result.codes == [.decryptionFailed], "\(result.summary)")
        #expect(result.report.status(of: .responseDocuments) == .skipped)
    }

    @Test func annexCFromAnOriginOutsideTheTenantIsAnUnknownTenant() throws {
        let result = try Self.annexC(origin: "https://evil.example")
        #expect(result.codes == [.eventUnknownTenant], "\(result.summary)")
    }

    @Test func appleStyleHPKEEnvelope() throws {
        let parameters = try Vectors.jsonObject("\(Self.folder)/apple-style-hpke-envelope/apple_params.json")
        let key = try PrivateKey(curve: .p256, scalar: hex(try #require(parameters["recipientPrivateKeyHex"] as? String)))
        let merchantID = try #require(parameters["merchantId"] as? String)
        let tenantKey = try TenantKey(key)
        #expect(tenantKey.keyHash == hex(try #require(parameters["pkRHash"] as? String)))
        let tenant = Tenant(
            id: "app", merchantIDs: [merchantID], teamID: try #require(parameters["teamId"] as? String), keys: [tenantKey],
            trustAnchors: try certificates("\(Self.folder)/iaca.pem"))
        let event = requestEvent(tenant: "app", flow: .appleWalletApp, data: [
            "payload": base64(try Vectors.hex("\(Self.folder)/apple-style-hpke-envelope/hpke_envelope.hex")),
            "nonce": base64(hex(try #require(parameters["nonce"] as? String))),
            "merchantId": merchantID,
        ], verifiedAt: Self.at)
        let result = Verifier(directory: TenantDirectory([tenant])).verify(eventJSON: event, at: Self.at)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "verified")
        #expect(result.report.status(of: .decryptionTranscript) == .passed)
    }
}
