import Crypto
import MDoc

/// `issuer.authority`: the trusted issuer may vouch for what the document
/// claims to be, as the trust list and ISO/IEC 18013-5 Annex B write it.
///
/// - docType: an IACA the tenant trusts only through VICALs is a trust point
///   for the docTypes its `certificateInfos[].docType` lists (the document's
///   and the MSO's docType must both be listed). An anchor of `trustAnchors`
///   vouches for every docType.
/// - Signer and IACA (Annex B, document signer `countryName` and
///   `stateOrProvinceName`): the signer's countryName equals its IACA's, and
///   where the IACA has a stateOrProvinceName the signer has the same. A
///   pinned signer has no IACA on its path, so there is nothing to compare.
/// - The document and its signer: a disclosed `issuing_country`
///   (org.iso.18013.5.1 and the org.iso.23220.* namespaces) equals the
///   signer's countryName. A disclosed `issuing_jurisdiction` (18013-5) or
///   `issuing_subdivision` (23220) equals the signer's stateOrProvinceName
///   where the signer has one (AAMVA's signers write the ISO 3166-2 code,
///   "US-MD", as the element does); where it has none, a value in ISO 3166-2
///   form must name the signer's country (the element's definition: its
///   first part is issuing_country). Only values whose digest the issuer
///   signed are read: an item whose digest fails says nothing (`mso.digests`
///   rejects it). An element not disclosed is not compared. A signer without
///   countryName (Apple's test signer) gives nothing to compare the document
///   with; under an IACA that has one, the signer-and-IACA rule refuses it.
///
/// Values are never named in details, only the certificates' names.
enum IssuerAuthorityCheck: DocumentCheck {
    static let name = CheckName.issuerAuthority
    static let reasons: [ReasonCode] = [
        .issuerDoctypeNotAuthorized, .issuerSignerCountryMismatch, .issuerIssuingCountryMismatch, .issuerIssuingJurisdictionMismatch,
    ]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard document.signerIsTrusted, let signer = document.signer, let anchor = document.path.last else {
            report.skip(name)
            return
        }
        let label = document.label
        var failed = false

        var docTypes = [document.document.docType]
        if let mso = document.parsedMSO, !mso.docType.hasSameUTF8(as: document.document.docType) { docTypes.append(mso.docType) }
        if case .docTypeNotListed(let docType, let lists) = document.context.anchorScopes.decision(anchor: anchor, docTypes: docTypes, at: document.context.time) {
            report.fail(name, .issuerDoctypeNotAuthorized,
                        "\(label): its IACA is a trust point only for other docTypes than \(docType) in \(lists.joined(separator: ", "))")
            failed = true
        }

        let facts = signer.facts
        if document.path.count > 1, let problem = signerNameProblem(signer: facts, iaca: anchor.facts) {
            report.fail(name, .issuerSignerCountryMismatch, "\(label): \(problem)")
            failed = true
        }

        let findings = elementFindings(document, signer: facts)
        if let country = findings.country {
            report.fail(name, .issuerIssuingCountryMismatch, "\(label): \(country)")
            failed = true
        }
        if let jurisdiction = findings.jurisdiction {
            report.fail(name, .issuerIssuingJurisdictionMismatch, "\(label): \(jurisdiction)")
            failed = true
        }
        if !failed { report.pass(name) }
    }

    /// Annex B: C equal to the IACA's, ST equal where the IACA has one. Two
    /// countryNames in one name say no single country, so they never match.
    static func signerNameProblem(signer: CertificateFacts, iaca: CertificateFacts) -> String? {
        if signer.subjectCountries.count > 1 || iaca.subjectCountries.count > 1 {
            return "the document signer or its IACA names more than one countryName"
        }
        if signer.subjectCountries != iaca.subjectCountries {
            return "the document signer's countryName (\(describe(signer.subjectCountries))) differs from its IACA's (\(describe(iaca.subjectCountries)))"
        }
        guard !iaca.subjectStates.isEmpty else { return nil }
        if signer.subjectStates.count > 1 || iaca.subjectStates.count > 1 {
            return "the document signer or its IACA names more than one stateOrProvinceName"
        }
        if signer.subjectStates != iaca.subjectStates {
            return "the document signer's stateOrProvinceName (\(describe(signer.subjectStates))) differs from its IACA's (\(describe(iaca.subjectStates)))"
        }
        return nil
    }

    private static func describe(_ values: [String]) -> String {
        values.first.map { "\"\($0)\"" } ?? "none"
    }

    /// The first problem with the disclosed issuing_country and with the
    /// disclosed jurisdiction, each at most once.
    static func elementFindings(_ document: DocumentUnderVerification, signer: CertificateFacts) -> (country: String?, jurisdiction: String?) {
        guard let mso = document.parsedMSO, signer.subjectCountries.count == 1, let country = signer.subjectCountries.first else { return (nil, nil) }
        var countryProblem: String?
        var jurisdictionProblem: String?
        for space in document.document.issuerSigned.nameSpaces {
            let isMDL = space.name.hasSameUTF8(as: mdlNameSpace)
            guard isMDL || space.name.utf8.starts(with: photoIDNameSpacePrefix.utf8) else { continue }
            let jurisdictionElement = isMDL ? "issuing_jurisdiction" : "issuing_subdivision"
            let signed = mso.valueDigests[Identifier(space.name)]
            for item in space.items {
                let isCountry = item.elementIdentifier.hasSameUTF8(as: "issuing_country")
                let isJurisdiction = item.elementIdentifier.hasSameUTF8(as: jurisdictionElement)
                guard isCountry || isJurisdiction else { continue }
                // Only what the issuer signed: the digest check reports the rest.
                guard let expected = signed?[item.digestID], mso.digestAlgorithm.hash(item.taggedBytes).elementsEqual(expected) else { continue }
                let value = item.elementValue.text
                if isCountry, countryProblem == nil, value.map({ !$0.hasSameUTF8(as: country) }) ?? true {
                    countryProblem = "\(space.name)/issuing_country differs from the document signer's countryName \"\(country)\""
                }
                if isJurisdiction, jurisdictionProblem == nil {
                    jurisdictionProblem = jurisdictionProblemOf(value, element: "\(space.name)/\(jurisdictionElement)", signer: signer, country: country)
                }
            }
        }
        return (countryProblem, jurisdictionProblem)
    }

    private static func jurisdictionProblemOf(_ value: String?, element: String, signer: CertificateFacts, country: String) -> String? {
        guard let value else { return "\(element) is not a text string" }
        if signer.subjectStates.count > 1 { return "\(element) cannot be compared: the document signer names more than one stateOrProvinceName" }
        if let state = signer.subjectStates.first {
            return value.hasSameUTF8(as: state) ? nil : "\(element) differs from the document signer's stateOrProvinceName \"\(state)\""
        }
        if isSubdivisionCode(value), !value.utf8.starts(with: (country + "-").utf8) {
            return "\(element) names a subdivision of another country than the document signer's \"\(country)\""
        }
        return nil
    }

    static let mdlNameSpace = "org.iso.18013.5.1"
    static let photoIDNameSpacePrefix = "org.iso.23220."

    /// ISO 3166-2: an ISO 3166-1 alpha-2 code, a hyphen, and one to three letters or digits.
    static func isSubdivisionCode(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (4...6).contains(bytes.count), bytes[2] == UInt8(ascii: "-") else { return false }
        let upper: (UInt8) -> Bool = { (0x41...0x5A).contains($0) }
        let digit: (UInt8) -> Bool = { (0x30...0x39).contains($0) }
        return upper(bytes[0]) && upper(bytes[1]) && bytes[3...].allSatisfy { upper($0) || digit($0) }
    }
}
