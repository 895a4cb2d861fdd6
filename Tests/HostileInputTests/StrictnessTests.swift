import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// Responses whose signatures all verify but that ISO 18013-5 or RFC 9052
/// refuse (Schemas/reason-codes.md, "Strictness"): each was `verified`
/// before, and must now be rejected with the code of the check it belongs to.
@Suite struct StrictnessTests {
    static func codes(_ event: [UInt8], _ verifier: Verifier) -> [ReasonCode] {
        verifier.verify(eventJSON: event, at: Lab.now).report.reasons.map(\.code)
    }

    // MARK: trust anchors are not document signers

    @Test func theIACASigningTheMSOItselfIsRefused() throws {
        var lab = try Lab()
        let authority = lab.factory.authority
        let event = try lab.signedBy(documentSigner: authority.iaca, key: authority.iacaKey)
        let result = lab.verifier.verify(eventJSON: event, at: Lab.now)
        #expect(result.report.reasons.map(\.code) == [.issuerUntrusted, .issuerCertificateInvalid], "\(result.report.reasons)")
        #expect(result.report.reasons.first?.detail.contains("trust anchor itself") == true)
    }

    @Test func aPinnedSignerIsTrustedAsItIsAndOnlyWhenPinned() throws {
        var lab = try Lab()
        // A signer without the Annex B profile, not issued by any IACA.
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("C", "US"), ("CN", "Pinned Signer")], publicKey: key.publicKey,
                                         notBefore: Lab.now - 86_400 * 30, notAfter: Lab.now + 86_400 * 300)
        builder.isCA = false
        let signer = try builder.selfSigned(with: key)
        let event = try lab.signedBy(documentSigner: signer, key: key)
        let merchant = lab.factory.merchant
        let pinned = Verifier(directory: TenantDirectory([
            Tenant(id: merchant.tenantID, merchantIDs: [merchant.merchantID], teamID: merchant.teamID, trustAnchors: [], pinnedDocumentSigners: [signer]),
        ]))
        #expect(Self.codes(event, pinned) == [])
        let anchored = Verifier(directory: TenantDirectory([
            Tenant(id: merchant.tenantID, merchantIDs: [merchant.merchantID], teamID: merchant.teamID, trustAnchors: [signer]),
        ]))
        #expect(Self.codes(event, anchored) == [.issuerUntrusted, .issuerCertificateInvalid])
    }

    /// Annex B marks the mdlDS EKU critical; Veridoc enforces it either way
    /// (reason-codes.md: "Document-signer EKU criticality"). Its absence still fails.
    @Test func aNonCriticalMdlDSUsageIsAcceptedAndAMissingOneIsNot() throws {
        var lab = try Lab()
        func signer(ekuExtension: [(oid: String, critical: Bool, der: [UInt8])]) throws -> (Certificate, PrivateKey) {
            let key = try PrivateKey.generate(curve: .p256)
            // Of its IACA's country and state (Annex B), so that only the EKU is at stake.
            var builder = CertificateBuilder(subject: [("C", "US"), ("ST", lab.factory.authority.state), ("CN", "Signer")], publicKey: key.publicKey,
                                             notBefore: Lab.now - 86_400 * 30, notAfter: Lab.now + 86_400 * 300)
            builder.isCA = false
            builder.keyUsage = .digitalSignature
            builder.extraExtensions = ekuExtension
            return (try builder.signed(by: lab.factory.authority.iaca, issuerKey: lab.factory.authority.iacaKey), key)
        }
        // extKeyUsage = SEQUENCE { 1.0.18013.5.1.2 }, not critical.
        let mdlDS: [UInt8] = [0x30, 0x09, 0x06, 0x07, 0x28, 0x81, 0x8c, 0x5d, 0x05, 0x01, 0x02]
        let (nonCritical, key) = try signer(ekuExtension: [(oid: "2.5.29.37", critical: false, der: mdlDS)])
        #expect(Self.codes(try lab.signedBy(documentSigner: nonCritical, key: key), lab.verifier) == [])
        let (missing, otherKey) = try signer(ekuExtension: [])
        #expect(Self.codes(try lab.signedBy(documentSigner: missing, key: otherKey), lab.verifier) == [.issuerCertificateInvalid])
    }

    // MARK: identifiers are bytes

    static let kyc = "org.example.KYC"
    static let kelvinKYC = "org.example.\u{212A}YC"

    @Test func aLookalikeNamespaceFindsNoSignedDigest() throws {
        var lab = try Lab()
        lab.factory.credential[Self.kyc, "level"] = .text("high")
        let parts = try lab.parts()
        guard case .map(let spaces)? = parts.issuerSigned["nameSpaces"] else { Issue.record("no nameSpaces"); return }
        let renamed = CBOR.map(spaces.map { $0.key == .text(Self.kyc) ? CBOR.MapEntry(.text(Self.kelvinKYC), $0.value) : $0 })
        let event = lab.with(parts, issuerSigned: parts.issuerSigned.replacing("nameSpaces", with: renamed))
        let result = lab.verifier.verify(eventJSON: event, at: Lab.now)
        #expect(result.report.reasons.map(\.code) == [.msoDigestMismatch], "\(result.report.reasons)")
        // Untouched, the namespace verifies and is reported as signed.
        let plain = lab.with(parts, issuerSigned: parts.issuerSigned)
        let verified = lab.verifier.verify(eventJSON: plain, at: Lab.now)
        #expect(verified.isVerified)
        #expect(verified.documents.first?.elements.contains { Array($0.namespace.utf8) == Array(Self.kyc.utf8) } == true)
    }

    @Test func aLookalikeDocTypeIsAnotherDocType() throws {
        var lab = try Lab()
        lab.factory.credential.docType = Self.kyc + ".1"
        let parts = try lab.parts()
        let event = lab.with(parts, document: parts.document.replacing("docType", with: .text(Self.kelvinKYC + ".1")))
        let codes = Self.codes(event, lab.verifier)
        // The device signed the real docType too, so its signature fails as well.
        #expect(codes == [.msoDoctypeMismatch, .deviceSignatureInvalid], "\(codes)")
        #expect(Self.codes(lab.with(parts, document: parts.document), lab.verifier) == [])
    }

    @Test func aLookalikeTenantIsUnknownNotAnAlias() throws {
        var factory = try TestIssuer.EventFactory(now: Lab.now, seed: 901)
        factory.merchant = try TestIssuer.Merchant(tenantID: "Kacme")
        let verifier = try factory.verifier()
        var event = try factory.event(.appleWalletApp)
        #expect(Self.codes(event.json(), verifier) == [])
        event.data["tenant"] = "\u{212A}acme"
        #expect(Self.codes(event.json(), verifier) == [.eventUnknownTenant])
    }

    // MARK: device authentication

    @Test func deviceAuthWithBothASignatureAndAMACIsRefused() throws {
        var lab = try Lab()
        let parts = try lab.parts()
        let deviceSigned = parts.document["deviceSigned"]!
        let auth = deviceSigned["deviceAuth"]!
        let both = auth.setting("deviceMac", to: .array([.bytes([]), .map([]), .null, .bytes([UInt8](repeating: 0, count: 32))]))
        let event = lab.with(parts, document: parts.document.replacing("deviceSigned", with: deviceSigned.replacing("deviceAuth", with: both)))
        #expect(Self.codes(event, lab.verifier) == [.deviceSignatureInvalid])
    }

    @Test func aDeviceKeyDeclaredForAnotherAlgorithmIsRefused() throws {
        var lab = try Lab()
        func declaring(_ algorithm: Int64) throws -> [UInt8] {
            try lab.resignedMSO { mso in
                guard let key = mso["deviceKeyInfo"]?["deviceKey"] else { return mso }
                return mso.replacing("deviceKeyInfo", with: ["deviceKey": key.setting(3, to: .int(algorithm))])
            }
        }
        #expect(Self.codes(try declaring(-35), lab.verifier) == [.deviceSignatureInvalid])  // ES384, signed with ES256
        #expect(Self.codes(try declaring(-7), lab.verifier) == [])  // ES256 itself
        #expect(Self.codes(try declaring(-9), lab.verifier) == [])  // ESP256: the same algorithm, fully specified
    }

    @Test func anEd25519DeviceKeyOfSmallOrderIsRefused() throws {
        var lab = try Lab()
        let identity: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 31)
        let event = try lab.resignedMSO { $0.replacing("deviceKeyInfo", with: ["deviceKey": [1: 1, -1: 6, -2: .bytes(identity)]]) }
        #expect(Self.codes(event, lab.verifier) == [.msoMalformed])
    }

    // MARK: COSE crit

    /// issuerAuth re-signed by the trusted document signer with `protected` as its protected header.
    static func issuerAuthSigned(_ lab: Lab, _ parts: Lab.Parts, protected: CBOR) throws -> [UInt8] {
        guard case .array(let cose)? = parts.issuerSigned["issuerAuth"].map({ item -> CBOR in
            if case .tagged(_, let inner) = item { return inner }
            return item
        }), case .bytes(let payload) = cose[2] else { throw TestIssuer.FixtureError("no issuerAuth") }
        let protectedBytes = protected.encoded()
        let toBeSigned = CBOR.array(["Signature1", .bytes(protectedBytes), .bytes([]), .bytes(payload)]).encoded()
        let signature = try lab.factory.authority.documentSignerKey.signature(for: toBeSigned, hash: .sha256)
        let auth = CBOR.array([.bytes(protectedBytes), cose[1], .bytes(payload), .bytes(signature)])
        return lab.with(parts, issuerSigned: parts.issuerSigned.replacing("issuerAuth", with: auth))
    }

    @Test func critNamingWhatTheVerifierDoesNotActOnIsRefused() throws {
        var lab = try Lab()
        let parts = try lab.parts()
        let verifier = lab.verifier
        func codes(_ header: [CBOR.MapEntry]) throws -> [ReasonCode] {
            Self.codes(try Self.issuerAuthSigned(lab, parts, protected: .map(header)), verifier)
        }
        // The re-signing itself keeps the response valid.
        #expect(try codes([.init(1, -7)]) == [])
        #expect(try codes([.init(1, -7), .init(2, [1])]) == [])
        #expect(try codes([.init(1, -7), .init(2, [99]), .init(99, 1)]) == [.issuerSignatureInvalid])
        #expect(try codes([.init(1, -7), .init(2, .array([]))]) == [.issuerSignatureInvalid])
        #expect(try codes([.init(1, -7), .init(2, [33])]) == [.issuerSignatureInvalid])  // x5chain is unprotected here
        #expect(try codes([.init(1, -7), .init(2, "label")]) == [.issuerSignatureInvalid])
    }

    @Test func critInTheUnprotectedHeaderIsRefused() throws {
        var lab = try Lab()
        let parts = try lab.parts()
        let event = lab.editingIssuerAuth(parts) { cose in
            var cose = cose
            guard case .map(let entries) = cose[1] else { return cose }
            cose[1] = .map(entries + [.init(2, [1])])
            return cose
        }
        #expect(Self.codes(event, lab.verifier) == [.issuerSignatureInvalid])
    }

    // MARK: one item per digest

    @Test func theSameSignedItemTwiceInANamespaceIsRefused() throws {
        var lab = try Lab()
        let parts = try lab.parts()
        let nameSpaces = parts.issuerSigned["nameSpaces"]!
        let mDL = CBOR.text(TestIssuer.Credential.mDLNameSpace)
        guard case .array(let items)? = nameSpaces[mDL], let first = items.first else { Issue.record("no items"); return }
        let doubled = nameSpaces.replacing(mDL, with: .array([first] + items))
        let event = lab.with(parts, issuerSigned: parts.issuerSigned.replacing("nameSpaces", with: doubled))
        let result = lab.verifier.verify(eventJSON: event, at: Lab.now)
        #expect(result.report.reasons.map(\.code) == [.msoDigestMismatch], "\(result.report.reasons)")
        #expect(result.report.reasons.first?.detail.contains("disclosed twice") == true)
    }
}

