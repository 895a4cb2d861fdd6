import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// Hostile events through the real `Verifier`: each case must yield exactly the
/// documented reason codes (Schemas/reason-codes.md) with bounded memory. What
/// each costs in CPU against a valid event of its size is `make bench`'s hostile
/// row (HostileBench), as a ratio in one run: a stopwatch here would fail on a
/// busy machine, not on a slow parser. The worker-level cases (replayed nonces across events, oversized
/// records) are in PipelineTests and the chaos run.
@Suite struct HostileInputTests {
    /// Peak resident growth allowed per case (the largest event is 5 MiB of JSON).
    static let memoryBound = 256 << 20

    static func maxResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    struct Case {
        let name: String
        let expected: [ReasonCode]
        let event: [UInt8]
        var verifier: Verifier? = nil
        /// Text one of the reasons' details must hold, where the code alone does not show which check refused.
        var detail: String? = nil
    }

    @Test("hostile inputs yield their documented reason codes")
    func table() throws {
        var lab = try Lab()
        let verifier = lab.verifier
        var report: [String] = []
        for item in try lab.cases() {
            let memoryBefore = Self.maxResidentBytes()
            let started = Date()
            let result = (item.verifier ?? verifier).verify(eventJSON: item.event, at: Lab.now)
            let elapsed = Date().timeIntervalSince(started)
            let codes: [ReasonCode] = result.report.reasons.map { $0.code }
            let shown = codes.isEmpty ? "verified" : codes.map { $0.rawValue }.joined(separator: ",")
            report.append("\(item.name) → \(shown) (\(Int(elapsed * 1000)) ms)")
            #expect(codes == item.expected, "\(item.name): got \(codes.map { $0.rawValue }), documented \(item.expected.map { $0.rawValue })")
            if let detail = item.detail {
                #expect(result.report.reasons.contains { $0.detail.contains(detail) }, "\(item.name): \(result.report.reasons.map(\.detail))")
            }
            // The peak resident size may not grow by more than a bounded amount for one event.
            let grown = Self.maxResidentBytes() - memoryBefore
            #expect(grown < Self.memoryBound, "\(item.name) raised the peak resident size by \(grown >> 20) MiB")
            _ = OutcomeEvent(result).json()  // the outcome of a hostile event encodes too
        }
        print(report.joined(separator: "\n"))
    }
}

/// A fixed time, one test issuer and merchant, and the surgery the cases need.
struct Lab {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    var factory: TestIssuer.EventFactory
    let verifier: Verifier

    init() throws {
        factory = try TestIssuer.EventFactory(now: Self.now, seed: 900)
        verifier = try factory.verifier()
    }

    // MARK: DeviceResponse surgery (iso-device-response: the payload is the DeviceResponse itself)

    struct Parts {
        let event: TestIssuer.GeneratedEvent
        let response: CBOR
        let document: CBOR
        let issuerSigned: CBOR
    }

    mutating func parts() throws -> Parts {
        let event = try factory.event(.isoDeviceResponse)
        let response = try CBORDecoder().decode(event.deviceResponse).value
        guard case .array(let documents)? = response["documents"], let document = documents.first else { throw TestIssuer.FixtureError("no document") }
        return Parts(event: event, response: response, document: document, issuerSigned: document["issuerSigned"]!)
    }

    func with(_ parts: Parts, document: CBOR) -> [UInt8] {
        parts.event.replacingPayload(parts.response.replacing("documents", with: [document]).encoded()).json()
    }

    func with(_ parts: Parts, issuerSigned: CBOR) -> [UInt8] {
        with(parts, document: parts.document.replacing("issuerSigned", with: issuerSigned))
    }

    /// COSE_Sign1 parts [protected, unprotected, payload, signature], tagged (18) or not.
    static func editCOSE(_ item: CBOR, _ edit: ([CBOR]) -> [CBOR]) -> CBOR {
        switch item {
        case .tagged(let tag, .array(let parts)): return .tagged(tag, .array(edit(parts)))
        case .array(let parts): return .array(edit(parts))
        default: return item
        }
    }

    func editingIssuerAuth(_ parts: Parts, _ edit: ([CBOR]) -> [CBOR]) -> [UInt8] {
        with(parts, issuerSigned: parts.issuerSigned.replacing("issuerAuth", with: Self.editCOSE(parts.issuerSigned["issuerAuth"]!, edit)))
    }

    func editingDeviceSignature(_ parts: Parts, _ edit: ([CBOR]) -> [CBOR]) -> [UInt8] {
        let deviceSigned = parts.document["deviceSigned"]!
        let deviceAuth = deviceSigned["deviceAuth"]!
        let signature = Self.editCOSE(deviceAuth["deviceSignature"]!, edit)
        return with(parts, document: parts.document.replacing("deviceSigned", with: deviceSigned.replacing("deviceAuth", with: deviceAuth.replacing("deviceSignature", with: signature))))
    }

    /// An edit of a COSE structure's parts that replaces part `index` with `value`.
    static func setting(_ index: Int, to value: CBOR) -> ([CBOR]) -> [CBOR] {
        { parts in
            var parts = parts
            parts[index] = value
            return parts
        }
    }

    /// The protected header {1: alg} as its exact bytes.
    static func protected(_ header: [UInt8]) -> CBOR { .bytes(header) }

    /// The first IssuerSignedItemBytes of the mDL namespace replaced by `bytes` (the tag-24 content).
    func replacingFirstItem(_ parts: Parts, content: [UInt8]) -> [UInt8] {
        let nameSpaces = parts.issuerSigned["nameSpaces"]!
        guard case .array(let items)? = nameSpaces[.text(TestIssuer.Credential.mDLNameSpace)] else { return [] }
        let replaced = nameSpaces.replacing(.text(TestIssuer.Credential.mDLNameSpace), with: .array([.tagged(24, .bytes(content))] + items.dropFirst()))
        return with(parts, issuerSigned: parts.issuerSigned.replacing("nameSpaces", with: replaced))
    }

    func firstItemContent(_ parts: Parts) -> [UInt8] {
        guard case .array(let items)? = parts.issuerSigned["nameSpaces"]?[.text(TestIssuer.Credential.mDLNameSpace)],
              case .tagged(24, .bytes(let content))? = items.first.flatMap({ try? CBORDecoder().decode($0.encoded()).value })
        else { return [] }
        return content
    }

    /// An iso-device-response event whose MSO was edited and re-signed by the trusted document signer.
    mutating func resignedMSO(_ edit: (CBOR) -> CBOR) throws -> [UInt8] {
        let event = try factory.event(.isoDeviceResponse)
        let issued = try factory.authority.issue(
            factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: TestIssuer.IssuanceOptions(now: Self.now), using: &factory.random)
        var options = TestIssuer.IssuanceOptions(now: Self.now)
        let auth = try COSESign1(try CBORDecoder().decode(issued.issuerAuth.encoded()), context: "test")
        let mso = try CBORDecoder().decode(auth.payload ?? []).decodeEmbedded("MSO").value
        options.payloadOverride = CBOR.embedded(edit(mso)).encoded()
        var resigned = try factory.authority.issue(factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: options, using: &factory.random)
        resigned.nameSpaces = issued.nameSpaces
        let document = try factory.holder.present(resigned, transcript: event.transcript)
        return event.replacingPayload(TestIssuer.deviceResponse(documents: [document])).json()
    }

    /// An event signed by `authority` (same IACA) whose document signer certificate is `certificate`.
    mutating func signedBy(documentSigner certificate: Certificate, key: PrivateKey) throws -> [UInt8] {
        let saved = factory.authority
        factory.authority = TestIssuer.Authority(curve: saved.curve, name: saved.name, state: saved.state, iacaKey: saved.iacaKey, iaca: saved.iaca,
                                                 documentSignerKey: key, documentSigner: certificate)
        defer { factory.authority = saved }
        return try factory.event(.isoDeviceResponse).json()
    }

    // MARK: the table

    mutating func cases() throws -> [HostileInputTests.Case] {
        typealias Case = HostileInputTests.Case
        var cases: [Case] = []
        let huge: [UInt8] = [0x5b, 0x40, 0, 0, 0, 0, 0, 0, 0]

        // Sizes and lengths.
        var big = try factory.event(.isoDeviceResponse)
        big.data["payload"] = String(repeating: "A", count: 5 << 20)
        cases.append(Case(name: "oversized event (5 MiB of base64, limit 4 MiB)", expected: [.eventInvalid], event: big.json()))
        // Names are stored as indexed keys: a signed namespace or element identifier past 256 bytes is refused.
        func named(_ namespace: String, _ identifier: String) throws -> [UInt8] {
            var issuer = factory
            issuer.credential[namespace, identifier] = .text("x")
            return try issuer.event(.isoDeviceResponse).json()
        }
        let mDL = TestIssuer.Credential.mDLNameSpace
        let longestName = String(repeating: "n", count: IssuerSigned.maxNameLength)
        cases.append(Case(name: "element identifier of 257 bytes, signed", expected: [.payloadMalformed], event: try named(mDL, longestName + "n"),
                          detail: "elementIdentifier is longer than 256 bytes"))
        cases.append(Case(name: "element identifier of 256 bytes, signed", expected: [], event: try named(mDL, longestName)))
        cases.append(Case(name: "namespace of 257 bytes, signed", expected: [.payloadMalformed], event: try named(longestName + "n", "e"),
                          detail: "namespace longer than 256 bytes"))

        var p = try parts()
        cases.append(Case(name: "payload is a bstr head claiming 2^62 bytes", expected: [.payloadMalformed], event: p.event.replacingPayload(huge).json()))
        cases.append(Case(name: "payload array claiming 2^64-1 items", expected: [.payloadMalformed],
                          event: p.event.replacingPayload([0x9b] + [UInt8](repeating: 0xff, count: 8)).json()))
        cases.append(Case(name: "IssuerSignedItem content claims 2^62 bytes", expected: [.payloadMalformed], event: replacingFirstItem(p, content: huge)))
        // Many namespaces, each empty (none carries an item, so nothing signed is touched): the
        // duplicate-name checks must not make this quadratic; past the event's item budget
        // (Verifier.eventCBORLimits) the payload is refused.
        func manySpaces(_ count: Int) -> CBOR {
            guard case .map(let entries)? = p.issuerSigned["nameSpaces"] else { return .null }
            return .map(entries + (0..<count).map { CBOR.MapEntry(.text("ns.\($0)"), .array([])) })
        }
        cases.append(Case(name: "10,000 empty namespaces", expected: [],
                          event: with(p, issuerSigned: p.issuerSigned.replacing("nameSpaces", with: manySpaces(10_000)))))
        cases.append(Case(name: "20,000 empty namespaces (past the event's item budget)", expected: [.payloadMalformed],
                          event: with(p, issuerSigned: p.issuerSigned.replacing("nameSpaces", with: manySpaces(20_000))), detail: "nested structures included"))
        cases.append(Case(name: "10,000-deep array nesting", expected: [.payloadMalformed],
                          event: p.event.replacingPayload([UInt8](repeating: 0x81, count: 10_000) + [0]).json()))
        cases.append(Case(name: "100,000 indefinite maps never closed", expected: [.payloadMalformed],
                          event: p.event.replacingPayload([UInt8](repeating: 0xbf, count: 100_000)).json()))

        // Duplicate map keys.
        let dupResponse: [UInt8] = {
            var bytes: [UInt8] = [0xa4]
            bytes += CBOR.text("version").encoded() + CBOR.text("1.0").encoded()
            bytes += CBOR.text("documents").encoded() + (p.response["documents"]!).encoded()
            bytes += CBOR.text("documents").encoded() + CBOR.array([]).encoded()
            bytes += CBOR.text("status").encoded() + CBOR.unsigned(0).encoded()
            return bytes
        }()
        cases.append(Case(name: "DeviceResponse with the key \"documents\" twice", expected: [.payloadMalformed], event: p.event.replacingPayload(dupResponse).json()))
        // Status is not signed: a response reporting an error is refused, documents or not (ISO 18013-5: no data is returned).
        cases.append(Case(name: "DeviceResponse status 10 (general error) carrying its documents", expected: [.responseNoDocuments],
                          event: p.event.replacingPayload(p.response.replacing("status", with: .unsigned(10)).encoded()).json(), detail: "status 10"))
        let dupMSO = try resignedMSO { mso in
            guard case .map(let entries) = mso else { return mso }
            return .map(entries + [CBOR.MapEntry(.text("docType"), .text("org.iso.18013.5.1.mDL"))])
        }
        cases.append(Case(name: "signed MSO with the key \"docType\" twice", expected: [.msoMalformed], event: dupMSO))

        // Exact bytes: re-encodings that keep the values change what was signed or digested.
        p = try parts()
        let content = firstItemContent(p)
        if content.first.map({ $0 & 0xe0 == 0xa0 && $0 & 0x1f < 24 }) == true {
            // Same map, head written non-minimally (0xb8 n) / as indefinite length (0xbf … 0xff).
            let count = content[0] & 0x1f
            cases.append(Case(name: "IssuerSignedItem map head non-minimal (same values)", expected: [.msoDigestMismatch],
                              event: replacingFirstItem(p, content: [0xb8, count] + content.dropFirst())))
            cases.append(Case(name: "IssuerSignedItem map as indefinite length (same values)", expected: [.msoDigestMismatch],
                              event: replacingFirstItem(p, content: [0xbf] + content.dropFirst() + [0xff])))
        }
        // {1: -7} with -7 as 0x38 0x06.
        cases.append(Case(name: "issuerAuth protected header alg as a non-minimal integer", expected: [.issuerSignatureInvalid],
                          event: editingIssuerAuth(p, Self.setting(0, to: .bytes([0xa1, 0x01, 0x38, 0x06])))))

        // COSE algorithms.
        func alg(_ value: Int64, _ name: String, _ expected: [ReasonCode]) {
            cases.append(Case(name: "issuerAuth alg \(name)", expected: expected, event: editingIssuerAuth(p, Self.setting(0, to: .bytes(CBOR.map([CBOR.MapEntry(.unsigned(1), .int(value))]).encoded())))))
        }
        alg(-35, "ES384 with a P-256 key", [.issuerSignatureInvalid])
        alg(-8, "EdDSA with an EC key", [.issuerSignatureInvalid])
        alg(-37, "PS256 (unsupported)", [.payloadUnsupported])  // reason-codes.md: unsupported COSE algorithm
        alg(-65_535, "-65535 (unknown)", [.payloadUnsupported])
        cases.append(Case(name: "issuerAuth protected header empty (no alg)", expected: [.issuerSignatureInvalid], event: editingIssuerAuth(p, Self.setting(0, to: .bytes([])))))

        // Signatures.
        cases.append(Case(name: "zero-length issuer signature", expected: [.issuerSignatureInvalid], event: editingIssuerAuth(p, Self.setting(3, to: .bytes([])))))
        cases.append(Case(name: "zero-length device signature", expected: [.deviceSignatureInvalid], event: editingDeviceSignature(p, Self.setting(3, to: .bytes([])))))
        cases.append(Case(name: "issuer signature of 64 zero bytes (r = s = 0)", expected: [.issuerSignatureInvalid], event: editingIssuerAuth(p, Self.setting(3, to: .bytes([UInt8](repeating: 0, count: 64))))))

        // Certificates.
        let ds = factory.authority.documentSigner
        // Extra certificates are only offered as intermediates; the signer still chains, up to the cap.
        let longest = COSESign1.maxChainCertificates
        cases.append(Case(name: "x5chain with \(longest) certificates (signer + copies)", expected: [], event: editingIssuerAuth(p, Self.setting(1, to: .map([CBOR.MapEntry(.unsigned(33), .array([CBOR](repeating: .bytes(ds.der), count: longest)))])))))
        // Past the cap the header is refused before any certificate is read: here none is one.
        cases.append(Case(name: "x5chain with 1,000 entries", expected: [.issuerCertificateInvalid], event: editingIssuerAuth(p) { parts in
            var parts = parts
            parts[1] = .map([CBOR.MapEntry(.unsigned(33), .array([.bytes(ds.der)] + [CBOR](repeating: .bytes([0x30, 0x00]), count: 999)))])
            return parts
        }, detail: "more than the \(longest) accepted"))
        cases.append(Case(name: "x5chain holding a non-certificate", expected: [.issuerCertificateInvalid], event: editingIssuerAuth(p, Self.setting(1, to: .map([CBOR.MapEntry(.unsigned(33), .bytes([0x30, 0x03, 0x02, 0x01, 0x01]))])))))
        let criticalKey = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("C", "US"), ("ST", "CA"), ("O", "Veridoc Test"), ("CN", "Critical Extension Signer")],
                                         publicKey: criticalKey.publicKey, notBefore: Self.now - 86_400 * 30, notAfter: Self.now + 86_400 * 300)
        builder.isCA = false
        builder.keyUsage = .digitalSignature
        builder.extendedKeyUsage = [DocumentSignerProfile.extendedKeyUsage]
        builder.extraExtensions = [(oid: "1.3.6.1.4.1.55555.1.1", critical: true, der: [0x05, 0x00])]
        let critical = try builder.signed(by: factory.authority.iaca, issuerKey: factory.authority.iacaKey)
        cases.append(Case(name: "document signer with an unknown critical extension", expected: [.issuerCertificateInvalid],
                          event: try signedBy(documentSigner: critical, key: criticalKey)))

        // Keys (signed into the MSO by the trusted signer).
        let offCurve = try resignedMSO { $0.replacing("deviceKeyInfo", with: ["deviceKey": [1: 2, -1: 1, -2: .bytes([UInt8](repeating: 1, count: 32)), -3: .bytes([UInt8](repeating: 2, count: 32))]]) }
        cases.append(Case(name: "device key not on the curve", expected: [.msoMalformed], event: offCurve))
        let infinity = try resignedMSO { $0.replacing("deviceKeyInfo", with: ["deviceKey": [1: 2, -1: 1, -2: .bytes([UInt8](repeating: 0, count: 32)), -3: .bytes([UInt8](repeating: 0, count: 32))]]) }
        cases.append(Case(name: "device key at (0,0) / the point at infinity", expected: [.msoMalformed], event: infinity))
        let shortCoordinate = try resignedMSO { $0.replacing("deviceKeyInfo", with: ["deviceKey": [1: 2, -1: 1, -2: .bytes([]), -3: .bytes([])]]) }
        cases.append(Case(name: "device key with empty coordinates", expected: [.msoMalformed], event: shortCoordinate))

        // Digests of the wrong length, signed.
        let shortDigests = try resignedMSO { mso in
            guard case .map(let spaces)? = mso["valueDigests"] else { return mso }
            let truncated = spaces.map { entry -> CBOR.MapEntry in
                guard case .map(let digests) = entry.value else { return entry }
                return CBOR.MapEntry(entry.key, .map(digests.map { digest in
                    guard case .bytes(let bytes) = digest.value else { return digest }
                    return CBOR.MapEntry(digest.key, .bytes(Array(bytes.prefix(31))))
                }))
            }
            return mso.replacing("valueDigests", with: .map(truncated))
        }
        cases.append(Case(name: "value digests of 31 bytes (SHA-256 expected)", expected: [.msoDigestMismatch], event: shortDigests))

        // Dates.
        func time(_ text: String, _ expected: [ReasonCode]) throws {
            var event = try factory.event(.isoDeviceResponse)
            event.attributes["time"] = text
            cases.append(Case(name: "event time \(text)", expected: expected, event: event.json()))
        }
        try time("9999-12-31T23:59:59Z", [.requestExpired])
        try time("0001-01-01T00:00:00Z", [.requestExpired])
        try time("2025-13-45T99:99:99Z", [.eventInvalid])
        try time("+275760-09-13T00:00:00Z", [.eventInvalid])
        let farMSO = try resignedMSO { $0.replacing("validityInfo", with: [
            "signed": .tagged(0, .text("2025-06-15T00:00:00Z")), "validFrom": .tagged(0, .text("0000-01-01T00:00:00Z")),
            "validUntil": .tagged(0, .text("99999-12-31T23:59:59Z")),
        ]) }
        cases.append(Case(name: "MSO validUntil in year 99999", expected: [.msoMalformed], event: farMSO))

        // base64 variants (documented: event.invalid).
        var wrapped = try factory.event(.isoDeviceResponse)
        let base64 = wrapped.data["payload"]!
        wrapped.data["payload"] = stride(from: 0, to: base64.count, by: 76).map { start in
            String(base64.dropFirst(start).prefix(76))
        }.joined(separator: "\n")
        cases.append(Case(name: "payload base64 line-wrapped at 76", expected: [.eventInvalid], event: wrapped.json()))
        var spaced = try factory.event(.isoDeviceResponse)
        spaced.data["payload"] = " " + spaced.data["payload"]! + " "
        cases.append(Case(name: "payload base64 with surrounding spaces", expected: [.eventInvalid], event: spaced.json()))
        var urlSafe = try factory.event(.isoDeviceResponse)
        let bytes = urlSafe.deviceResponse
        urlSafe.data["payload"] = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let hasURLChars = urlSafe.data["payload"]!.contains("-") || urlSafe.data["payload"]!.contains("_")
        cases.append(Case(name: "payload in base64url where base64 is required", expected: hasURLChars ? [.eventInvalid] : [], event: urlSafe.json()))
        var unpadded = try factory.event(.isoDeviceResponse)
        if unpadded.data["payload"]!.hasSuffix("=") {
            unpadded.data["payload"] = String(unpadded.data["payload"]!.reversed().drop { $0 == "=" }.reversed())
            cases.append(Case(name: "payload base64 without its padding", expected: [.eventInvalid], event: unpadded.json()))
        }

        // Unicode oddities.
        func tenant(_ name: String, _ value: String, _ expected: [ReasonCode]) throws {
            var event = try factory.event(.isoDeviceResponse)
            event.data["tenant"] = value
            cases.append(Case(name: "tenant \(name)", expected: expected, event: event.json()))
        }
        let real = factory.merchant.tenantID
        try tenant("with a zero-width space", real + "\u{200B}", [.eventUnknownTenant])
        try tenant("with a right-to-left override", "\u{202E}" + real, [.eventUnknownTenant])
        try tenant("in fullwidth letters", String(real.unicodeScalars.map { scalar in
            (0x21...0x7e).contains(scalar.value) ? Character(Unicode.Scalar(scalar.value + 0xfee0)!) : Character(scalar)
        }), [.eventUnknownTenant])
        try tenant("with a NUL", real + "\u{0}", [.eventUnknownTenant])
        var composed = try factory.event(.isoDeviceResponse)
        composed.attributes["id"] = "e\u{301}vent-\u{1F600}-\u{202E}"
        cases.append(Case(name: "event id with combining marks, emoji and RLO (opaque, verified)", expected: [], event: composed.json()))
        let lone = try factory.event(.isoDeviceResponse)
        let loneJSON = Array(lone.jsonString.replacingOccurrences(of: "\"\(lone.id!)\"", with: "\"\\ud800\"").utf8)
        cases.append(Case(name: "event id with a lone surrogate escape", expected: [.eventInvalid], event: loneJSON))
        cases.append(Case(name: "event bytes that are not UTF-8", expected: [.eventInvalid], event: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))

        // Replays and tenants.
        let original = try factory.event(.appleWalletApp)
        var replay = original
        replay.attributes["id"] = "replay-of-\(original.id!)"
        cases.append(Case(name: "replayed response under a new id (verifier alone: nonce skipped)", expected: [], event: replay.json()))
        var other = try TestIssuer.Merchant(tenantID: "other-tenant", merchantID: "merchant.com.example.other", teamID: "OTHER12345")
        other.maxRequestAgeSeconds = factory.merchant.maxRequestAgeSeconds
        let twoTenants = Verifier(directory: TenantDirectory([
            try factory.merchant.tenant(trusting: [factory.authority.iaca]), try other.tenant(trusting: [factory.authority.iaca]),
        ]))
        var claiming = try factory.event(.appleWalletApp)
        claiming.data["tenant"] = "other-tenant"
        // The Apple flow binds the merchantId to its tenant: another tenant's name does not match it.
        cases.append(Case(name: "Apple event claiming another configured tenant", expected: [.eventUnknownTenant], event: claiming.json(), verifier: twoTenants))
        var claimingWeb = try factory.event(.appleWalletWeb)
        claimingWeb.data["tenant"] = "other-tenant"
        cases.append(Case(name: "web event claiming another configured tenant", expected: [.decryptionUnknownKey], event: claimingWeb.json(), verifier: twoTenants))
        return cases
    }
}
