import CBOR
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// `mso.element_types`: a catalogued element of the wrong CBOR type rejects
/// the document, naming the element and its type, never its value; other
/// docTypes and unknown elements are not checked.
@Suite struct ElementTypesCheckTests {
    static let now = JurisdictionTests.now

    static func verify(_ edit: (inout TestIssuer.Credential) -> Void) throws -> VerificationResult {
        var factory = try JurisdictionTests.factory(authority: try TestIssuer.Authority(now: now), edit: edit, seed: 31)
        return try JurisdictionTests.verify(&factory)
    }

    @Test func aMistypedElementIsNamedWithItsTypeAndNotItsValue() throws {
        let result = try Self.verify { credential in
            credential[TestIssuer.Credential.mDLNameSpace, "age_over_21"] = "true"
            credential[TestIssuer.Credential.mDLNameSpace, "birth_date"] = .text("1990-01-01")
            credential[TestIssuer.Credential.mDLNameSpace, "portrait"] = .text("JPEG")
        }
        #expect(result.codes == [.msoElementTypeMismatch] && result.verdict == "rejected")
        #expect(result.report.status(of: .msoDigests) == .passed, "the issuer signed these values")
        let detail = try #require(result.report.reasons.first?.detail)
        #expect(detail.contains("3 element(s) of the wrong type"), "\(detail)")
        for named in ["org.iso.18013.5.1/birth_date is not full-date", "org.iso.18013.5.1/portrait is not bstr", "org.iso.18013.5.1/age_over_21 is not bool"] {
            #expect(detail.contains(named), "\(detail)")
        }
        #expect(!detail.contains("1990") && !detail.contains("JPEG") && !detail.contains("true"), "no value in the detail: \(detail)")
    }

    @Test func everyTypedElementOfTheTestIssuerConforms() throws {
        let result = try Self.verify { _ in }
        #expect(result.codes == [] && result.report.status(of: .msoElementTypes) == .passed)
    }

    @Test func unknownElementsAndDocTypesAreNotChecked() throws {
        // An element the catalogue does not know, of any type.
        let unknown = try Self.verify { $0[TestIssuer.Credential.mDLNameSpace, "favourite_colour"] = .unsigned(7) }
        #expect(unknown.codes == [] && unknown.report.status(of: .msoElementTypes) == .passed)
        // A docType the catalogue does not know: skipped, whatever its elements.
        let other = try Self.verify { credential in
            credential.docType = "com.example.membership.1"
            credential[TestIssuer.Credential.mDLNameSpace, "portrait"] = .text("JPEG")
        }
        #expect(!other.codes.contains(.msoElementTypeMismatch) && other.report.status(of: .msoElementTypes) == .skipped, "\(other.codes)")
    }
}
