import CBOR
import DocumentTypes
import Foundation
import MDoc
import Testing
import TestSupport

/// The document catalogue: the compiled-in files read, lookups answer as
/// the tables say, and a file that breaks a rule is refused naming it.
struct CatalogueTests {
    let catalogue = DocumentCatalogue.shared

    @Test func everyDocumentTypeIsCataloguedWithItsSources() throws {
        let docTypes = catalogue.documentTypes.map(\.docType)
        #expect(Set(docTypes) == ["org.iso.18013.5.1.mDL", "org.iso.23220.photoid.1", "org.iso.23220.1.jp.mnc", "eu.europa.ec.eudi.pid.1", "eu.europa.ec.av.1"])
        for type in catalogue.documentTypes {
            #expect(!type.sources.isEmpty && !type.namespaces.isEmpty, "\(type.docType)")
            #expect(type.namespaces.allSatisfy { !$0.elements.isEmpty }, "\(type.docType)")
        }
        // Earlier spellings find the same entry.
        #expect(catalogue.documentType("eu.europa.ec.eudiw.pid.1")?.docType == "eu.europa.ec.eudi.pid.1")
        #expect(catalogue.documentType("org.iso.23220.photoID.1")?.docType == "org.iso.23220.photoid.1")
        #expect(catalogue.documentType("org.iso.18013.5.1.mdl") == nil, "docTypes are compared byte for byte")
    }

    @Test func lookupsAnswerAsTheTablesSay() throws {
        let mDL = "org.iso.18013.5.1.mDL"
        let family = try #require(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "family_name"))
        #expect(family.type == .text && family.kind == .personal)
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "issue_date")?.type == .date)
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "driving_privileges")?.type == .drivingPrivileges)
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1.aamva", identifier: "DHS_compliance")?.kind == .technical)
        // `age_over_##`: exactly two digits.
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "age_over_21")?.kind == .predicate)
        for odd in ["age_over_1", "age_over_210", "age_over_2a", "age_over_", "age_over_٢١"] {
            #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: odd) == nil, "\(odd)")
        }
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "biometric_template_face")?.type == .bytes)
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "biometric_template_") == nil)
        // Renamed 23220 identifiers map to one another.
        let photo = "org.iso.23220.photoid.1"
        #expect(catalogue.element(docType: photo, namespace: "org.iso.23220.1", identifier: "family_name_unicode")?.sameAs == "family_name")
        #expect(catalogue.element(docType: photo, namespace: "org.iso.23220.1", identifier: "birth_date")?.type == .birthDate)
        // Unknown namespaces, elements and docTypes are untyped, not errors; names are compared byte for byte.
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1.xx", identifier: "family_name") == nil)
        #expect(catalogue.element(docType: mDL, namespace: "org.iso.18013.5.1", identifier: "family_name\u{200B}") == nil)
        #expect(catalogue.element(docType: "com.example.card", namespace: "org.iso.18013.5.1", identifier: "family_name") == nil)
        #expect(catalogue.element(docType: "eu.europa.ec.av.1", namespace: "eu.europa.ec.av.1", identifier: "age_over_18")?.type == .boolean)
        #expect(catalogue.element(docType: "eu.europa.ec.av.1", namespace: "eu.europa.ec.av.1", identifier: "family_name") == nil)
    }

    @Test(arguments: [
        (#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "string", "kind": "personal"}]}]}"#, "n/a: unknown type"),
        (#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "tstr", "kind": "secret"}]}]}"#, "n/a: unknown kind"),
        (#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "tstr", "kind": "personal"}, {"id": "a", "type": "uint", "kind": "personal"}]}]}"#, "n/a twice"),
        (#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "tstr", "kind": "personal", "sameAs": "b"}]}]}"#, "n/a: sameAs b is not an element of the namespace"),
        (#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "tstr", "kind": "personal", "typo": 1}]}]}"#, "unknown member typo"),
        (#"{"docType": "x", "title": "t", "sources": [], "namespaces": []}"#, "sources missing"),
    ])
    func aFileThatBreaksARuleIsRefused(_ text: String, _ problem: String) {
        let error = #expect(throws: CatalogueError.self) { try DocumentCatalogue(files: [("bad.json", Array(text.utf8))]) }
        #expect(error?.file == "bad.json" && error?.problem == problem, "\(String(describing: error))")
    }

    @Test func aDocTypeCataloguedTwiceIsRefused() {
        let file = Array(#"{"docType": "x", "title": "t", "sources": ["s"], "namespaces": [{"namespace": "n", "elements": [{"id": "a", "type": "tstr", "kind": "personal"}]}]}"#.utf8)
        let error = #expect(throws: CatalogueError.self) { try DocumentCatalogue(files: [("a.json", file), ("b.json", file)]) }
        #expect(error?.problem == "docType x is catalogued twice")
    }
}

/// The docs name every catalogued docType and its file.
struct CatalogueDocsTests {
    @Test func theDocsListEveryDocumentType() throws {
        let docs = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/document-types.md").standardized,
                              encoding: .utf8)
        for type in DocumentCatalogue.shared.documentTypes {
            #expect(docs.contains("`\(type.docType)`"), "\(type.docType)")
        }
    }
}

extension CatalogueDocsTests {
    /// docs/document-types.md carries the tables `veridoc-dev catalogue`
    /// prints, between its markers, as the files are now.
    @Test func theDocsCarryTheCurrentTables() throws {
        let docs = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/document-types.md").standardized,
                              encoding: .utf8)
        let start = try #require(docs.range(of: "<!-- catalogue: generated by veridoc-dev catalogue -->\n"))
        let end = try #require(docs.range(of: "\n<!-- catalogue: end -->"))
        let section = String(docs[start.upperBound..<end.lowerBound])
        #expect(section == DocumentCatalogue.shared.markdown.trimmingCharacters(in: .newlines),
                "docs/document-types.md's tables are out of date: run veridoc-dev catalogue and paste its output between the markers")
    }
}
