import Crypto
import Foundation
import Testing

/// A small PKI made at run time: IACAs, optional intermediate, document signers.
struct TestPKI {
    static let start = utc("2026-01-01")
    static let end = utc("2036-01-01")
    static let checkTime = utc("2027-06-01")
    static let mdlDS = "1.0.18013.5.1.2"

    static func iaca(_ name: String, key: PrivateKey) throws -> Certificate {
        var builder = CertificateBuilder(subject: [("CN", name), ("C", "US")], publicKey: key.publicKey, notBefore: start, notAfter: end)
        builder.isCA = true
        builder.keyUsage = [.keyCertSign, .cRLSign]
        return try builder.selfSigned(with: key)
    }

    static func documentSigner(_ name: String = "Test DS", key: PrivateKey, from: Date = start, to: Date = utc("2030-01-01"),
                               customize: (inout CertificateBuilder) -> Void = { _ in }) -> CertificateBuilder {
        var builder = CertificateBuilder(subject: [("CN", name), ("C", "US"), ("ST", "US-CA")], publicKey: key.publicKey, notBefore: from, notAfter: to)
        builder.isCA = false
        builder.keyUsage = .digitalSignature
        builder.extendedKeyUsage = [mdlDS]
        customize(&builder)
        return builder
    }
}

private func expectUntrusted(_ result: Result<[Certificate], ChainValidationError>, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .failure(.untrusted) = result else {
        Issue.record("expected .untrusted, got \(result)", sourceLocation: sourceLocation)
        return
    }
}

private func expectInvalid(_ result: Result<[Certificate], ChainValidationError>, mentioning text: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .failure(.certificateInvalid(let detail)) = result else {
        Issue.record("expected .certificateInvalid, got \(result)", sourceLocation: sourceLocation)
        return
    }
    #expect(detail.contains(text), "detail: \(detail)", sourceLocation: sourceLocation)
}

@Suite("X.509 certificates built at run time")
struct X509BuilderTests {
    @Test func selfSignedIACAHasTheRequestedFields() throws {
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", "Test IACA"), ("C", "US"), ("O", "Veridoc, Inc.")], publicKey: key.publicKey,
                                         notBefore: TestPKI.start, notAfter: TestPKI.end, serial: 0x0102_0304)
        builder.isCA = true
        builder.keyUsage = [.keyCertSign, .cRLSign]
        let iaca = try builder.selfSigned(with: key)

        #expect(iaca.subject == iaca.issuer)
        #expect(iaca.subject.description == #"CN=Test IACA, C=US, O=Veridoc\, Inc."#)
        #expect(iaca.isSelfIssued)
        #expect(iaca.serialNumberHex == "01020304")
        #expect(iaca.notBefore == TestPKI.start)
        #expect(iaca.notAfter == TestPKI.end)
        #expect(iaca.basicConstraints == BasicConstraints(isCA: true))
        #expect(iaca.keyUsage == [.keyCertSign, .cRLSign])
        #expect(iaca.extendedKeyUsage == nil)
        #expect(iaca.subjectKeyIdentifier?.count == 20)
        #expect(iaca.authorityKeyIdentifier == iaca.subjectKeyIdentifier)
        #expect(try iaca.publicKey().spki == key.publicKey.spki)
        #expect(iaca.unhandledCriticalExtensions.isEmpty)
    }

    @Test func bareCertificateHasNoOptionalExtensions() throws {
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", "bare")], publicKey: key.publicKey, notBefore: TestPKI.start, notAfter: TestPKI.end, serial: 0)
        builder.includeKeyIdentifiers = false
        let bare = try builder.selfSigned(with: key)
        #expect(bare.keyUsage == nil)
        #expect(bare.extendedKeyUsage == nil)
        #expect(bare.basicConstraints == nil)
        #expect(bare.subjectKeyIdentifier == nil)
        #expect(bare.authorityKeyIdentifier == nil)
        #expect(bare.serialNumberHex == "0")
    }

    @Test(arguments: [(Curve.p256, Curve.p256), (.p384, .p256), (.p384, .p384), (.p521, .p256), (.p256, .p521)])
    func documentSignerValidatesToItsIACA(iacaCurve: Curve, dsCurve: Curve) throws {
        let iacaKey = try PrivateKey.generate(curve: iacaCurve)
        let iaca = try TestPKI.iaca("IACA \(iacaCurve.rawValue)", key: iacaKey)
        let dsKey = try PrivateKey.generate(curve: dsCurve)
        let ds = try TestPKI.documentSigner(key: dsKey).signed(by: iaca, issuerKey: iacaKey)

        #expect(ds.issuer == iaca.subject)
        #expect(ds.authorityKeyIdentifier == iaca.subjectKeyIdentifier)
        #expect(ds.extendedKeyUsage == [TestPKI.mdlDS])
        #expect(ds.keyUsage == .digitalSignature)
        #expect(ds.basicConstraints == BasicConstraints(isCA: false))
        #expect(try ds.publicKey().type == .ec(dsCurve))
        #expect(DocumentSignerProfile.violations(of: ds).isEmpty)
        #expect(try TrustStore(anchors: [iaca]).validate(leaf: ds, intermediates: [], at: TestPKI.checkTime).get() == [ds, iaca])
    }

    @Test func ed25519IssuerAndSubject() throws {
        let iacaKey = try PrivateKey.generateEd25519()
        let iaca = try TestPKI.iaca("Ed25519 IACA", key: iacaKey)
        let dsKey = try PrivateKey.generateEd25519()
        let ds = try TestPKI.documentSigner(key: dsKey).signed(by: iaca, issuerKey: iacaKey)
        #expect(try ds.publicKey().type == .ed25519)
        #expect(DocumentSignerProfile.violations(of: ds).isEmpty)
        #expect(try TrustStore(anchors: [iaca]).validate(leaf: ds, intermediates: [], at: TestPKI.checkTime).get() == [ds, iaca])
    }

    @Test func pathThroughAnIntermediate() throws {
        let rootKey = try PrivateKey.generate(curve: .p384)
        let root = try TestPKI.iaca("Root", key: rootKey)
        let intermediateKey = try PrivateKey.generate(curve: .p256)
        var intermediateBuilder = CertificateBuilder(subject: [("CN", "Intermediate")], publicKey: intermediateKey.publicKey,
                                                     notBefore: TestPKI.start, notAfter: TestPKI.end)
        intermediateBuilder.isCA = true
        intermediateBuilder.keyUsage = [.keyCertSign, .cRLSign]
        let intermediate = try intermediateBuilder.signed(by: root, issuerKey: rootKey)
        let ds = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: intermediate, issuerKey: intermediateKey)

        let rootStore = TrustStore(anchors: [root])
        #expect(try rootStore.validate(leaf: ds, intermediates: [intermediate], at: TestPKI.checkTime).get() == [ds, intermediate, root])
        expectUntrusted(rootStore.validate(leaf: ds, intermediates: [], at: TestPKI.checkTime))
        // A trusted intermediate ends the path without its root.
        #expect(try TrustStore(anchors: [intermediate]).validate(leaf: ds, intermediates: [], at: TestPKI.checkTime).get() == [ds, intermediate])
    }

    @Test func documentSignerIssuedByANonCAFails() throws {
        let rootKey = try PrivateKey.generate(curve: .p256)
        let root = try TestPKI.iaca("Root", key: rootKey)
        let middleKey = try PrivateKey.generate(curve: .p256)
        let notACA = try TestPKI.documentSigner("Not a CA", key: middleKey).signed(by: root, issuerKey: rootKey)
        let ds = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: notACA, issuerKey: middleKey)
        expectInvalid(TrustStore(anchors: [root]).validate(leaf: ds, intermediates: [notACA], at: TestPKI.checkTime), mentioning: "depth 1")
    }

    @Test func expiredAndNotYetValidDocumentSigners() throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        let store = TrustStore(anchors: [iaca])
        let expired = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256), from: utc("2026-01-01"), to: utc("2027-01-01"))
            .signed(by: iaca, issuerKey: iacaKey)
        expectInvalid(store.validate(leaf: expired, intermediates: [], at: TestPKI.checkTime), mentioning: "expired")
        let future = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256), from: utc("2028-01-01"), to: utc("2029-01-01"))
            .signed(by: iaca, issuerKey: iacaKey)
        expectInvalid(store.validate(leaf: future, intermediates: [], at: TestPKI.checkTime), mentioning: "not yet valid")
        // The anchor's own validity counts too.
        let valid = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: iaca, issuerKey: iacaKey)
        expectInvalid(store.validate(leaf: valid, intermediates: [], at: utc("2025-06-01")), mentioning: "not yet valid")
    }

    @Test func unknownCriticalExtensionFailsValidation() throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        let hostile = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) {
            $0.extraExtensions = [(oid: "1.2.3.4.5.6.7", critical: true, der: [0x05, 0x00])]
        }.signed(by: iaca, issuerKey: iacaKey)
        #expect(hostile.unhandledCriticalExtensions == ["1.2.3.4.5.6.7"])
        expectInvalid(TrustStore(anchors: [iaca]).validate(leaf: hostile, intermediates: [], at: TestPKI.checkTime), mentioning: "critical")
        // Pinning it does not help: the anchor's extensions are checked as well.
        expectInvalid(TrustStore(anchors: [hostile]).validate(leaf: hostile, intermediates: [], at: TestPKI.checkTime), mentioning: "critical")

        let harmless = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) {
            $0.extraExtensions = [(oid: "1.2.3.4.5.6.7", critical: false, der: [0x05, 0x00])]
        }.signed(by: iaca, issuerKey: iacaKey)
        #expect(harmless.unhandledCriticalExtensions.isEmpty)
        #expect(throws: Never.self) { try TrustStore(anchors: [iaca]).validate(leaf: harmless, intermediates: [], at: TestPKI.checkTime).get() }
    }

    @Test func documentSignerFromAnotherIACAIsUntrusted() throws {
        let keyA = try PrivateKey.generate(curve: .p256)
        let iacaA = try TestPKI.iaca("IACA A", key: keyA)
        let keyB = try PrivateKey.generate(curve: .p256)
        let iacaB = try TestPKI.iaca("IACA B", key: keyB)
        let ds = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: iacaA, issuerKey: keyA)
        expectUntrusted(TrustStore(anchors: [iacaB]).validate(leaf: ds, intermediates: [], at: TestPKI.checkTime))
        // An impostor root with the same name but another key is not a path either.
        let impostorKey = try PrivateKey.generate(curve: .p256)
        let impostor = try TestPKI.iaca("IACA A", key: impostorKey)
        expectUntrusted(TrustStore(anchors: [impostor]).validate(leaf: ds, intermediates: [], at: TestPKI.checkTime))
        // A self-signed certificate that is not an anchor.
        expectUntrusted(TrustStore(anchors: [iacaB]).validate(leaf: iacaA, intermediates: [], at: TestPKI.checkTime))
        expectUntrusted(TrustStore(anchors: []).validate(leaf: ds, intermediates: [iacaA], at: TestPKI.checkTime))
    }

    @Test func strictModeWantsKeyIdentifiersBelowTheAnchor() throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        let withoutIdentifiers = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.includeKeyIdentifiers = false }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(withoutIdentifiers.authorityKeyIdentifier == nil)
        expectInvalid(TrustStore(anchors: [iaca]).validate(leaf: withoutIdentifiers, intermediates: [], at: TestPKI.checkTime),
                      mentioning: "Authority Key Identifier")
        // Pinned on its own, the same certificate is the whole path and passes.
        #expect(throws: Never.self) {
            try TrustStore(anchors: [withoutIdentifiers]).validate(leaf: withoutIdentifiers, intermediates: [], at: TestPKI.checkTime).get()
        }
    }

    @Test func tamperedSignatureFailsValidation() throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        let ds = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: iaca, issuerKey: iacaKey)
        var bytes = ds.der
        bytes[bytes.count - 1] ^= 0x01  // last byte of the ECDSA s value
        let tampered = try Certificate(der: bytes)
        expectInvalid(TrustStore(anchors: [iaca]).validate(leaf: tampered, intermediates: [], at: TestPKI.checkTime), mentioning: "signature")
    }

    @Test func builderRejectsAMismatchedIssuerKey() throws {
        let iaca = try TestPKI.iaca("IACA", key: PrivateKey.generate(curve: .p256))
        #expect(throws: CryptoError.self) {
            try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)).signed(by: iaca, issuerKey: PrivateKey.generate(curve: .p256))
        }
    }

    @Test func builderRejectsBadInput() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let badCountry = CertificateBuilder(subject: [("C", "USA")], publicKey: key.publicKey, notBefore: TestPKI.start, notAfter: TestPKI.end)
        #expect(throws: CryptoError.self) { try badCountry.selfSigned(with: key) }
        var badOID = CertificateBuilder(subject: [("CN", "x")], publicKey: key.publicKey, notBefore: TestPKI.start, notAfter: TestPKI.end)
        badOID.extendedKeyUsage = ["not an oid"]
        #expect(throws: CryptoError.self) { try badOID.selfSigned(with: key) }
    }

    @Test func documentSignerProfileFlagsViolations() throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        let noEKU = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.extendedKeyUsage = nil }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(DocumentSignerProfile.violations(of: noEKU).count == 1)
        #expect(DocumentSignerProfile.violations(of: noEKU).first?.contains("1.0.18013.5.1.2") == true)

        let wrongEKU = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.extendedKeyUsage = ["1.3.6.1.5.5.7.3.2"] }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(DocumentSignerProfile.violations(of: wrongEKU).count == 1)

        let markedCA = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.isCA = true }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(DocumentSignerProfile.violations(of: markedCA) == ["basic constraints mark the certificate as a CA"])

        let noKeyUsage = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.keyUsage = nil; $0.isCA = nil }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(DocumentSignerProfile.violations(of: noKeyUsage).count == 1)

        let signsCertificates = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256)) { $0.keyUsage = [.digitalSignature, .keyCertSign]; $0.isCA = nil }
            .signed(by: iaca, issuerKey: iacaKey)
        #expect(DocumentSignerProfile.violations(of: signsCertificates).count == 1)
    }

    @Test func derRoundTripAndHashing() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: key)
        let copy = try Certificate(der: iaca.der)
        #expect(copy == iaca)
        #expect(copy.der == iaca.der)
        #expect(Set([iaca, copy]).count == 1)
        #expect(try Certificate(der: iaca.der[...]) == iaca)
        let other = try TestPKI.iaca("IACA", key: key)
        #expect(other != iaca)  // a fresh random serial and signature
    }

    @Test func malformedInputIsAnErrorNotACrash() throws {
        let der = try TestPKI.iaca("IACA", key: PrivateKey.generate(curve: .p256)).der
        let malformed: [[UInt8]] = [[], [0x30], [0x30, 0x00], Array(der.prefix(der.count - 1)), Array(der.prefix(40)),
                                    der + [0x00], Array(repeating: 0xFF, count: 300), Array("not a certificate".utf8)]
        for bytes in malformed {
            #expect(throws: CryptoError.self) { try Certificate(der: bytes) }
        }
        let pems = ["", "hello", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
                    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
                    "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString() + "\n"]
        for pem in pems {
            #expect(throws: CryptoError.self) { try Certificate.parsePEM(pem) }
        }
        let good = "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        #expect(try Certificate.parsePEM(good).map(\.der) == [der])
    }

    @Test func negativeSerialFromARealReaderCA() throws {
        // The verifier.multipaz.org reader CA (P-384), from the ISO 18013-7 Annex C real capture.
        let pem = """
        -----BEGIN CERTIFICATE-----
        MIICaTCCAe+gAwIBAgIQtzUvFDCKLUBWQAZ4UnCw5zAKBggqhkjOPQQDAzA3MQsw
        CQYDVQQGDAJVUzEoMCYGA1UEAwwfdmVyaWZpZXIubXVsdGlwYXoub3JnIFJlYWRl
        ciBDQTAeFw0yNTA2MTkyMjE2MzJaFw0zMDA2MTkyMjE2MzJaMDcxCzAJBgNVBAYM
        AlVTMSgwJgYDVQQDDB92ZXJpZmllci5tdWx0aXBhei5vcmcgUmVhZGVyIENBMHYw
        EAYHKoZIzj0CAQYFK4EEACIDYgAEa6oCzC8rfHfwVOmQf83WyHEQFE8HrLK+Nxsu
        fJDrSFgMXjhRvPt3fIjlMyRAaf94Y25Ux9tXg+28EzzB/xG7q8P/FQ9nOSJkw4cQ
        JVdD/ufN599uVdfp1URdG95Vncuoo4G/MIG8MA4GA1UdDwEB/wQEAwIBBjASBgNV
        HRMBAf8ECDAGAQH/AgEAMFYGA1UdHwRPME0wS6BJoEeGRWh0dHBzOi8vZ2l0aHVi
        LmNvbS9vcGVud2FsbGV0LWZvdW5kYXRpb24tbGFicy9pZGVudGl0eS1jcmVkZW50
        aWFsL2NybDAdBgNVHQ4EFgQUsYQ5hS9Kbuq/6mKtvFHQgfdIhykwHwYDVR0jBBgw
        FoAUsYQ5hS9Kbuq/6mKtvFHQgfdIhykwCgYIKoZIzj0EAwMDaAAwZQIwKh87sK/c
        Mbzuc9PFvyiSRedr2RoP0fuFK0X8ddOpi6hEMOapHL/Gs/QByROCpDpkAjEA2yLS
        JDZEu1GI8uChAsDBZwJPtv5KHUjq1Vpok69SNn+zzb1mNpqmiey+tchPBjZm
        -----END CERTIFICATE-----
        """
        let ca = try #require(try Certificate.parsePEM(pem).first)
        #expect(ca.serialNumberHex == "-48CAD0EBCF75D2BFA9BFF987AD8F4F19")
        #expect(ca.subject.description == "C=US, CN=verifier.multipaz.org Reader CA")
        #expect(try ca.publicKey().type == .ec(.p384))
        #expect(try TrustStore(anchors: [ca]).validate(leaf: ca, intermediates: [], at: utc("2026-01-01")).get() == [ca])
    }

    @Test func concurrentValidationsShareOneStore() async throws {
        let iacaKey = try PrivateKey.generate(curve: .p256)
        let iaca = try TestPKI.iaca("IACA", key: iacaKey)
        var signers: [Certificate] = []
        for index in 0..<8 {
            signers.append(try TestPKI.documentSigner("DS \(index)", key: PrivateKey.generate(curve: .p256)).signed(by: iaca, issuerKey: iacaKey))
        }
        let expired = try TestPKI.documentSigner(key: PrivateKey.generate(curve: .p256), from: utc("2026-01-01"), to: utc("2026-02-01"))
            .signed(by: iaca, issuerKey: iacaKey)
        let store = TrustStore(anchors: [iaca])
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for round in 0..<200 {
                let leaf = round % 9 == 8 ? expired : signers[round % 8]
                group.addTask {
                    let result = store.validate(leaf: leaf, intermediates: [], at: TestPKI.checkTime)
                    if leaf == expired {
                        if case .failure(.certificateInvalid) = result { return true }
                        return false
                    }
                    return (try? result.get()) == [leaf, iaca]
                }
            }
            var all: [Bool] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 200)
        #expect(outcomes.allSatisfy { $0 })
    }
}
