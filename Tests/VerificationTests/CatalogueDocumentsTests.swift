import CBOR
import DocumentTypes
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// Every catalogued docType, minted by the test issuer from the catalogue
/// itself (a value for every element), verifies with every element typed;
/// and for each CBOR type the catalogue uses, a value of another shape is
/// refused, naming the element.
@Suite struct CatalogueDocumentsTests {
    static let now = JurisdictionTests.now

    static func verify(_ credential: TestIssuer.Credential, seed: UInt64) throws -> VerificationResult {
        var factory = TestIssuer.EventFactory(authority: try TestIssuer.Authority(now: now), merchant: try TestIssuer.Merchant(),
                                              holder: try TestIssuer.Holder(), credential: credential, now: now, seed: seed)
        return try JurisdictionTests.verify(&factory)
    }

    @Test(arguments: DocumentCatalogue.shared.documentTypes.map(\.docType))
    func aDocumentWithEveryCataloguedElementVerifies(_ docType: String) throws {
        let type = try #require(DocumentCatalogue.shared.documentType(docType))
        var random = TestIssuer.SeededRandom(seed: 41)
        let credential = TestIssuer.Credential.sample(of: type, now: Self.now, using: &random)
        let minted: Int = credential.nameSpaces.reduce(0) { $0 + $1.elements.count }
        let catalogued: Int = type.namespaces.reduce(0) { $0 + $1.elements.count }
        #expect(minted == catalogued)
        let result = try Self.verify(credential, seed: 41)
        #expect(result.codes == [] && result.verdict == "verified", "\(docType): \(result.report.reasons.map(\.detail))")
        #expect(result.report.status(of: .msoElementTypes) == .passed)
        #expect(result.documents.first?.docType == docType)
    }

    /// One element of each type the catalogue uses, from the first file that uses it.
    static let typedElements: [(docType: String, namespace: String, identifier: String, type: ElementType)] = ElementType.allCases.compactMap { wanted in
        for type in DocumentCatalogue.shared.documentTypes {
            for namespace in type.namespaces {
                if let element = namespace.elements.first(where: { $0.type == wanted }) {
                    return (type.docType, namespace.name, TestIssuer.Credential.sampleIdentifier(element.identifier), wanted)
                }
            }
        }
        return nil
    }

    @Test func everyTypeTheCatalogueUsesIsTried() {
        let used = Set(DocumentCatalogue.shared.documentTypes.flatMap { $0.namespaces.flatMap { $0.elements.map(\.type) } })
        #expect(Set(Self.typedElements.map(\.type)) == used)
    }

    @Test(arguments: typedElements.map { "\($0.docType) \($0.namespace) \($0.identifier) \($0.type.rawValue)" })
    func aValueOfAnotherShapeIsRefusedNamingTheElement(_ described: String) throws {
        let parts = described.split(separator: " ").map(String.init)
        let (docType, namespace, identifier) = (parts[0], parts[1], parts[2])
        let type = try #require(ElementType(rawValue: parts[3]))
        var random = TestIssuer.SeededRandom(seed: 43)
        var credential = TestIssuer.Credential.sample(of: try #require(DocumentCatalogue.shared.documentType(docType)), now: Self.now, using: &random)
        credential[namespace, identifier] = TestIssuer.Credential.mistypedValue(type)
        let result = try Self.verify(credential, seed: 43)
        #expect(result.codes.contains(.msoElementTypeMismatch) && result.verdict == "rejected", "\(described): \(result.codes)")
        let detail = result.report.reasons.first { $0.code == .msoElementTypeMismatch }?.detail ?? ""
        #expect(detail.hasSuffix("1 element(s) of the wrong type: \(namespace)/\(identifier) is not \(type.rawValue)"), "\(detail)")
    }
}
