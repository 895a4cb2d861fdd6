import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import Verification
import TestSupport

/// ISO/IEC 18013-5 Annex D (README §1) through the iso-device-response flow:
/// a deviceMac response, so the event must carry the ephemeral reader key.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct AnnexDVectorTests {
    static let folder = "iso18013-5-annex-d"

    enum TranscriptForm: String, CaseIterable { case sessionTranscriptBytes, sessionTranscript }

    /// The file holds SessionTranscriptBytes (`#6.24(bstr)`); the bare array is its embedded item.
    static func transcript(_ form: TranscriptForm) throws -> [UInt8] {
        let tagged = try Vectors.hex("\(folder)/session_transcript_bytes.hex")
        switch form {
        case .sessionTranscriptBytes: return tagged
        case .sessionTranscript: return Array(try CBORDecoder().decode(tagged).decodeEmbedded("SessionTranscriptBytes").encoded)
        }
    }

    /// EReaderKey.d from keys.json: the 32-byte P-256 scalar.
    static func readerScalar() throws -> [UInt8] {
        let keys = try Vectors.jsonObject("\(folder)/keys.json")
        let reader = try #require(keys["ephemeral_reader_key"] as? [String: Any])
        let scalar = hex(try #require(reader["d"] as? String))
        #expect(scalar.count == 32)
        return scalar
    }

    /// How the submission names the reader that held the reader key.
    enum ReaderSignature { case registered, unregistered, none }

    /// `reader`: the vector's MAC counts only when a reader registered for the
    /// tenant signed the submission (the vector has no such signature of its
    /// own: the test's reader key signs the same triple a reader app would forward).
    static func verify(at time: Date, form: TranscriptForm = .sessionTranscriptBytes, readerKey: Bool = true,
                       reader: ReaderSignature = .registered) throws -> VerificationResult {
        // The utopia IACA is not published: the signer is pinned, as multipaz and mdoc-ts do.
        let signer = try certificates("\(folder)/ds_cert.pem")
        let registered = try PrivateKey.generate(curve: .p256)
        let verifier = Verifier(directory: TenantDirectory([
            Tenant(id: "t", trustAnchors: [], pinnedDocumentSigners: signer, readers: ["reader-1": registered.publicKey]),
        ]))
        let signing: (id: String, key: PrivateKey)? = switch reader {
        case .registered: ("reader-1", registered)
        case .unregistered: ("reader-1", try PrivateKey.generate(curve: .p256))
        case .none: nil
        }
        let event = isoEvent(
            payload: try Vectors.hex("\(folder)/device_response.hex"), transcript: try transcript(form),
            readerKey: readerKey ? try readerScalar() : nil, verifiedAt: time, reader: signing)
        return verifier.verify(eventJSON: event, at: time)
    }

    @Test func bothTranscriptFormsNameTheSameTranscript() throws {
        let bytes = try SessionTranscript(received: Self.transcript(.sessionTranscriptBytes))
        let bare = try SessionTranscript(received: Self.transcript(.sessionTranscript))
        #expect(bytes == bare)
        #expect(bytes.taggedBytes == (try Self.transcript(.sessionTranscriptBytes)))
    }

    @Test(arguments: TranscriptForm.allCases)
    func verifiedWithTheDeviceMacInsideTheValidityWindow(form: TranscriptForm) throws {
        let result = try Self.verify(at: instant("2021-06-01T00:00:00Z"), form: form)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "verified")
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
        #expect(result.report.status(of: .payloadTranscript) == .passed)
        #expect(result.report.status(of: .payloadReader) == .passed)
        #expect(result.documents.first?.deviceAuthentication == .mac(reader: "reader-1"))
        #expect(result.documents.first?.elements.count == 6)
    }

    /// The same valid MAC with no reader's signature proves the device to
    /// nobody but the submitter, who chose the reader key: never verified.
    @Test func aMacWithoutAReaderSignatureIsUnbound() throws {
        let result = try Self.verify(at: instant("2021-06-01T00:00:00Z"), reader: .none)
        #expect(result.codes == [.deviceMacUnbound], "\(result.summary)")
        #expect(result.verdict == "rejected")
        #expect(result.documents.first?.deviceAuthentication == nil)
    }

    /// A signature by a key that is not the registered reader's is no binding either.
    @Test func aReaderSignatureByAnotherKeyIsRefused() throws {
        let result = try Self.verify(at: instant("2021-06-01T00:00:00Z"), reader: .unregistered)
        #expect(result.codes == [.readerUnauthenticated, .deviceMacUnbound], "\(result.summary)")
    }

    /// The vector's reader key is the transcript's EReaderKey; any other key is refused before the MAC.
    @Test func aReaderKeyOtherThanTheTranscriptsIsRefused() throws {
        let signer = try certificates("\(Self.folder)/ds_cert.pem")
        let registered = try PrivateKey.generate(curve: .p256)
        let verifier = Verifier(directory: TenantDirectory([
            Tenant(id: "t", trustAnchors: [], pinnedDocumentSigners: signer, readers: ["reader-1": registered.publicKey]),
        ]))
        let time = instant("2021-06-01T00:00:00Z")
        var other = try Self.readerScalar()
        other[31] ^= 0x01
        let event = isoEvent(
            payload: try Vectors.hex("\(Self.folder)/device_response.hex"), transcript: try Self.transcript(.sessionTranscriptBytes),
            readerKey: other, verifiedAt: time, reader: ("reader-1", registered))
        let result = verifier.verify(eventJSON: event, at: time)
        #expect(result.codes.first == .readerKeyMismatch, "\(result.summary)")
        #expect(result.verdict == "rejected")
    }

    @Test(arguments: ["2021-10-02T00:00:00Z", "2026-11-29T00:00:00Z"])
    func afterOctober2021TheDSCertificateAndMSOHaveExpired(time: String) throws {
        let result = try Self.verify(at: instant(time))
        #expect(result.codes == [.issuerCertificateInvalid, .msoExpired], "\(result.summary)")
        #expect(result.verdict == "rejected")
        // Signature, digest and MAC checks still pass.
        #expect(result.report.status(of: .issuerSignature) == .passed)
        #expect(result.report.status(of: .msoDigests) == .passed)
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
    }

    /// A registered reader that forwards no reader key: the MAC cannot be checked.
    @Test func withoutTheReaderKeyTheMacCannotBeChecked() throws {
        let result = try Self.verify(at: instant("2021-06-01T00:00:00Z"), readerKey: false)
        #expect(result.codes == [.deviceSignatureInvalid], "\(result.summary)")
        #expect(result.report.reasons.first?.detail.contains("ephemeral reader key") == true)
    }
}

/// auth0-lab/mdl examples (README §2): non-preferred CBOR and attached
/// deviceSignature payloads, so the received bytes must be hashed as received.
/// Examples 1 and 4 disclose a `portrait` that is the text "bstr", not the
/// bytes ISO 18013-5 defines: their signatures and digests hold, and they
/// are rejected for that element alone (`mso.element_type_mismatch`).
///
/// The signer `issuer_ny_dmv.pem` is a self-signed CA certificate without the
/// Annex B document-signer extensions; it is pinned (`pinnedDocumentSigners`),
/// and a pinned signer is trusted as it is (the profile binds IACA-issued signers).
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct Auth0VectorTests {
    static let at = instant("2024-01-01T00:00:00Z")

    static func verify(_ example: String, transcriptFile: String = "session_transcript.cbor.hex") throws -> VerificationResult {
        try verifyISOFolder("auth0-mdl/\(example)", pinned: certificates("auth0-mdl/issuer_ny_dmv.pem"), at: at, transcriptFile: transcriptFile)
    }

    /// The same self-signed signer configured as a trust anchor is not a
    /// document signer: an anchor never signs an MSO itself unless pinned.
    @Test func theSignerAsATrustAnchorIsRefused() throws {
        let result = try verifyISOFolder("auth0-mdl/example1", anchors: certificates("auth0-mdl/issuer_ny_dmv.pem"), at: Self.at)
        #expect(result.codes == [.issuerUntrusted, .issuerCertificateInvalid, .msoElementTypeMismatch], "\(result.summary)")
        #expect(result.report.reasons.first?.detail.contains("trust anchor itself") == true)
    }

    @Test(arguments: ["example1", "example2", "example4"])
    func signaturesAndDigestsHold(example: String) throws {
        let result = try Self.verify(example)
        for check in [CheckName.issuerSignature, .msoDigests, .msoValidity, .deviceAuthentication] {
            #expect(result.report.status(of: check) == .passed, "\(example): \(check.rawValue)")
        }
        if example == "example2" {
            #expect(result.codes == [] && result.verdict == "verified", "\(result.summary)")
        } else {
            #expect(result.codes == [.msoElementTypeMismatch] && result.verdict == "rejected", "\(result.summary)")
            let detail = result.report.reasons.first?.detail ?? ""
            #expect(detail.hasSuffix("1 element(s) of the wrong type: org.iso.18013.5.1/portrait is not bstr"), "\(detail)")
        }
    }

    @Test func example3HasATamperedFamilyName() throws {
        let result = try Self.verify("example3")
        #expect(result.codes == [.msoDigestMismatch], "\(result.summary)")
        let digest = result.report.reasons.first { $0.code == .msoDigestMismatch }
        #expect(digest?.detail.hasSuffix("digest mismatch for 1 item(s): org.iso.18013.5.1/family_name") == true, "\(digest?.detail ?? "")")
        #expect(result.report.status(of: .issuerSignature) == .passed)
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
    }

    /// The SessionTranscriptBytes form of the same transcript gives the same result.
    @Test func sessionTranscriptBytesFormIsAccepted() throws {
        let result = try Self.verify("example1", transcriptFile: "session_transcript_bytes.hex")
        #expect(result.codes == [.msoElementTypeMismatch], "\(result.summary)")
        #expect(result.report.status(of: .deviceAuthentication) == .passed)
    }
}

/// Real-world interop responses from mdoc-ts / animo (README §3).
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct AnimoVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let folder: String
        let validAt: String
        var testDescription: String { folder }
    }

    static let valid: [Case] = [
        Case(folder: "france-oid4vp-draft18", validAt: "2021-09-25T00:00:00Z"),
        Case(folder: "animo-oid4vp-1.0", validAt: "2026-01-12T00:00:00Z"),
    ]

    /// Folders whose `trust_anchor.pem` is the document signer itself (README §3):
    /// pinned. Animo's is a real root that issued its signer.
    static let pinnedSigner: Set<String> = ["google-dcapi-oid4vp-draft24", "france-oid4vp-draft18", "ubique-oid4vp-draft18"]

    static func verify(_ folder: String, at time: Date) throws -> VerificationResult {
        let trust = try certificates("animo-mdoc/\(folder)/trust_anchor.pem")
        return pinnedSigner.contains(folder)
            ? try verifyISOFolder("animo-mdoc/\(folder)", pinned: trust, at: time)
            : try verifyISOFolder("animo-mdoc/\(folder)", anchors: trust, at: time)
    }

    /// Folders whose IACA names a CRL distribution point (on a public host
    /// the tests do not reach): what the IACA names, and where.
    static let iacaCRLs = ["animo-oid4vp-1.0": "https://playground.animo.id/crl"]

    @Test(arguments: valid)
    func verified(_ vector: Case) throws {
        var result = try Self.verify(vector.folder, at: instant(vector.validAt))
        if let crl = Self.iacaCRLs[vector.folder] {
            // Nothing is verified until the IACA's CRL has been read: the
            // query names it, for the IACA and for its document signer
            // (which names no CRL of its own), and the status service's
            // answer decides.
            let lists = result.pendingStatusQueries.flatMap(\.certificateLists)
            #expect(lists.map(\.role) == [.documentSigner, .authority] && lists.map { try? $0.location.get() } == [crl, crl])
            #expect(result.verdict != "verified")
            let revoked = result.resolvingStatus { $0.map { _ in .revoked } }
            #expect(revoked.codes == [.statusRevoked], "\(revoked.summary)")
            result = result.resolvingStatus { $0.map { _ in .valid } }
        } else {
            #expect(result.pendingStatusQueries.isEmpty)
        }
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "verified")
        #expect(result.documents.count == 1)
    }

    /// An OpenID4VP transcript names its verifier only through hashes of values
    /// Veridoc is not given: a tenant that refuses them gets the flow mismatch,
    /// for the same response that verifies where they are accepted.
    @Test(arguments: valid)
    func aTenantThatRefusesOpenID4VPTranscriptsRejectsThem(_ vector: Case) throws {
        let trust = try certificates("animo-mdoc/\(vector.folder)/trust_anchor.pem")
        let pinned = Self.pinnedSigner.contains(vector.folder)
        let tenant = Tenant(id: "t", trustAnchors: pinned ? [] : trust, pinnedDocumentSigners: pinned ? trust : [], acceptsOpenID4VPTranscripts: false)
        let time = instant(vector.validAt)
        let event = isoEvent(
            payload: try Vectors.hex("animo-mdoc/\(vector.folder)/device_response.hex"),
            transcript: try Vectors.hex("animo-mdoc/\(vector.folder)/session_transcript.cbor.hex"), verifiedAt: time)
        let result = Verifier(directory: TenantDirectory([tenant])).verify(eventJSON: event, at: time)
        #expect(result.codes == [.transcriptFlowMismatch], "\(result.summary)")
    }

    /// Ubique's DS "C=CH, CN=Subject" has no extensions at all; it is
    /// pinned, so it is trusted as it is.
    @Test func ubiqueVerifiedWithItsPinnedSigner() throws {
        let result = try Self.verify("ubique-oid4vp-draft18", at: instant("2025-02-01T00:00:00Z"))
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.report.status(of: .issuerCertificate) == .passed)
    }

    @Test func ubiqueMSOExpiresAfterFebruary13() throws {
        let result = try Self.verify("ubique-oid4vp-draft18", at: instant("2025-02-14T00:00:00Z"))
        #expect(result.codes == [.msoExpired], "\(result.summary)")
    }

    /// Google's answer over the DC API is bound to an origin through the
    /// `OpenID4VPDCAPIHandover`, which Veridoc's openid4vp-dc-api flow checks:
    /// as an iso-device-response, where no origin is checked, it is refused,
    /// while its issuer and its device's signature over that transcript verify.
    @Test func googleDCAPIIsRefusedAsAProximityResponseAndItsSignaturesHold() throws {
        let result = try Self.verify("google-dcapi-oid4vp-draft24", at: instant("2025-02-20T00:00:00Z"))
        #expect(result.codes == [.transcriptFlowMismatch], "\(result.summary)")
        for check in [CheckName.issuerChain, .issuerSignature, .msoDigests, .msoValidity, .deviceAuthentication] {
            #expect(result.report.status(of: check) == .passed, "\(check.rawValue)")
        }
        let later = try Self.verify("google-dcapi-oid4vp-draft24", at: instant("2026-02-20T00:00:00Z"))
        #expect(later.codes == [.transcriptFlowMismatch, .issuerCertificateInvalid], "\(later.summary)")
    }

    @Test func franceReusesTheAnnexDIssuerAndExpiresWithIt() throws {
        let result = try Self.verify("france-oid4vp-draft18", at: instant("2021-10-02T00:00:00Z"))
        #expect(result.codes == [.issuerCertificateInvalid, .msoExpired], "\(result.summary)")
    }

    /// Bundesdruckerei IssuerSigned only (no DeviceResponse): issuer chain,
    /// signature, MSO and digests checked with the MDoc building blocks.
    @Test func bdrIssuerSignedChainSignatureAndDigests() throws {
        let time = instant("2025-02-05T00:00:00Z")
        let issuerSigned = try IssuerSigned(bytes: Vectors.hex("animo-mdoc/bdr-issuer-signed/issuer_signed.hex")[...])
        let auth = issuerSigned.issuerAuth

        let chain = try auth.x5chain(context: "issuerAuth")
        let signer = try #require(chain.first)
        let store = TrustStore(anchors: try certificates("animo-mdoc/bdr-issuer-signed/trust_anchor.pem"))
        #expect((try? store.validate(leaf: signer, intermediates: Array(chain.dropFirst()), at: time).get()) != nil)

        #expect(DocumentSignerProfile.violations(of: signer) == [])

        let algorithm = try auth.algorithm(context: "issuerAuth")
        #expect(auth.isValidSignature(algorithm: algorithm, key: try signer.publicKey()))

        let mso = try MobileSecurityObject(payload: try #require(auth.payload))
        #expect(mso.validFrom <= time && time <= mso.validUntil)
        #expect(mso.signed >= signer.notBefore && mso.signed <= signer.notAfter)

        var counts: [String: Int] = [:]
        for space in issuerSigned.nameSpaces {
            for item in space.items {
                let expected = try #require(mso.valueDigests[Identifier(space.name)]?[item.digestID], "\(space.name)/\(item.elementIdentifier)")
                #expect(mso.digestAlgorithm.hash(item.taggedBytes) == Array(expected), "\(space.name)/\(item.elementIdentifier)")
                counts[space.name, default: 0] += 1
            }
        }
        #expect(counts == ["org.iso.18013.5.1": 17, "org.iso.18013.5.1.DE": 1])

        // One flipped byte in an item breaks exactly its digest.
        let item = try #require(issuerSigned.nameSpaces.first?.items.first)
        var tampered = Array(item.taggedBytes)
        tampered[tampered.count - 1] ^= 0x01
        #expect(mso.digestAlgorithm.hash(tampered) != Array(try #require(mso.valueDigests[Identifier(issuerSigned.nameSpaces[0].name)]?[item.digestID])))
    }
}
