import CBOR
import DocumentTypes
import MDoc
import Testing
import TestSupport

/// What real documents send, against the catalogue: every issuer-signed
/// element of every public vector's DeviceResponse is looked up, and each
/// one the catalogue types must have that type, except the mismatches named
/// here, which are the vectors' own. Elements the catalogue does not know
/// are counted, not failed (untyped is allowed).
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct VectorElementTests {
    static let responses = Vectors.deviceResponses

    /// auth0-lab/mdl's examples carry the text "bstr" where ISO 18013-5
    /// requires a portrait's bytes: their signatures hold, their portrait is
    /// not one.
    static let knownMismatches: [String: [String]] = [
        "auth0-mdl/example1/device_response.hex": ["org.iso.18013.5.1/portrait"],
        "auth0-mdl/example4/device_response.hex": ["org.iso.18013.5.1/portrait"],
    ]

    @Test(arguments: responses)
    func everyTypedElementHasItsType(_ path: String) throws {
        let response = try DeviceResponse(bytes: try Vectors.hex(path)[...])
        var typed = 0, untyped: [String] = [], mismatched: [String] = []
        for document in response.documents {
            for space in document.issuerSigned.nameSpaces {
                for item in space.items {
                    guard let element = DocumentCatalogue.shared.element(docType: document.docType, namespace: space.name, identifier: item.elementIdentifier) else {
                        untyped.append("\(space.name)/\(item.elementIdentifier)")
                        continue
                    }
                    typed += 1
                    if !element.type.admits(item.elementValue) { mismatched.append("\(space.name)/\(item.elementIdentifier)") }
                }
            }
        }
        print("catalogue vs \(path): \(typed) typed, untyped \(untyped), mismatched \(mismatched)")
        #expect(mismatched == Self.knownMismatches[path, default: []], "\(path)")
        #expect(typed > 0, "\(path): no element the catalogue knows")
    }
}
