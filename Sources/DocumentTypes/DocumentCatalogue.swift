import JSON

/// Every document type Veridoc knows the elements of, read from the files
/// of `catalogue/` compiled into the binary: data a person can read and
/// check against its sources, used by the verifier, the test issuer, the
/// docs and the schemas alike. A docType or element it does not know is
/// not an error: it is untyped.
public struct DocumentCatalogue: Sendable {
    public let documentTypes: [DocumentType]
    private let byDocType: [String: DocumentType]

    /// The compiled-in catalogue. Its files are part of the build; one that
    /// does not read is a fault of the build, which every test run finds.
    public static let shared: DocumentCatalogue = {
        do {
            return try DocumentCatalogue(files: CatalogueFiles.all)
        } catch {
            preconditionFailure("the compiled-in document catalogue does not read: \(error)")
        }
    }()

    public init(files: [(name: String, bytes: [UInt8])]) throws(CatalogueError) {
        var types: [DocumentType] = []
        for file in files { types.append(try CatalogueFile.read(file.bytes, name: file.name)) }
        var byDocType: [String: DocumentType] = [:]
        for type in types {
            for name in [type.docType] + type.otherDocTypes {
                guard byDocType[name] == nil else { throw CatalogueError(file: "catalogue", problem: "docType \(name) is catalogued twice") }
                byDocType[name] = type
            }
        }
        documentTypes = types
        self.byDocType = byDocType
    }

    /// The document type `docType` names (or an earlier spelling of it), byte for byte.
    public func documentType(_ docType: String) -> DocumentType? {
        guard let type = byDocType[docType], ([type.docType] + type.otherDocTypes).contains(where: { $0.utf8.elementsEqual(docType.utf8) }) else { return nil }
        return type
    }

    /// What the catalogue knows of one returned element; nil: untyped.
    public func element(docType: String, namespace: String, identifier: String) -> DocumentType.Element? {
        documentType(docType)?.namespace(namespace)?.element(identifier)
    }
}

/// Why a catalogue file does not read: which file, and what is wrong.
public struct CatalogueError: Error, Sendable, Equatable {
    public let file: String
    public let problem: String
}

/// One catalogue file as JSON, read strictly: every member known, every
/// type and kind one of the vocabulary, no identifier twice in a namespace,
/// every `sameAs` naming an element of the same namespace.
enum CatalogueFile {
    static func read(_ bytes: [UInt8], name: String) throws(CatalogueError) -> DocumentType {
        func fail(_ problem: String) -> CatalogueError { CatalogueError(file: name, problem: problem) }
        let root: JSONValue
        do {
            root = try JSONParser().parse(bytes)
        } catch {
            throw fail("not JSON: \(error)")
        }
        guard let object = root.objectValue else { throw fail("not an object") }
        try known(object.keys, ["docType", "otherDocTypes", "title", "sources", "namespaces"], fail)
        guard let docType = root["docType"]?.stringValue, !docType.isEmpty else { throw fail("docType missing") }
        guard let title = root["title"]?.stringValue else { throw fail("title missing") }
        guard let sources = root["sources"]?.arrayValue?.compactMap(\.stringValue), !sources.isEmpty else { throw fail("sources missing") }
        let others = root["otherDocTypes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard let spaces = root["namespaces"]?.arrayValue, !spaces.isEmpty else { throw fail("namespaces missing") }
        var namespaces: [DocumentType.Namespace] = []
        for space in spaces {
            guard let spaceObject = space.objectValue else { throw fail("a namespace is not an object") }
            try known(spaceObject.keys, ["namespace", "elements"], fail)
            guard let spaceName = space["namespace"]?.stringValue, let entries = space["elements"]?.arrayValue else {
                throw fail("a namespace without its name or elements")
            }
            guard !namespaces.contains(where: { $0.name == spaceName }) else { throw fail("namespace \(spaceName) twice") }
            var elements: [DocumentType.Element] = []
            for entry in entries {
                guard let entryObject = entry.objectValue else { throw fail("an element of \(spaceName) is not an object") }
                try known(entryObject.keys, ["id", "type", "kind", "sameAs", "note"], fail)
                guard let identifier = entry["id"]?.stringValue, !identifier.isEmpty else { throw fail("an element of \(spaceName) has no id") }
                guard let type = entry["type"]?.stringValue.flatMap(ElementType.init(rawValue:)) else { throw fail("\(spaceName)/\(identifier): unknown type") }
                guard let kind = entry["kind"]?.stringValue.flatMap(ElementKind.init(rawValue:)) else { throw fail("\(spaceName)/\(identifier): unknown kind") }
                guard !elements.contains(where: { $0.identifier == identifier }) else { throw fail("\(spaceName)/\(identifier) twice") }
                elements.append(DocumentType.Element(identifier: identifier, type: type, kind: kind, sameAs: entry["sameAs"]?.stringValue,
                                                     note: entry["note"]?.stringValue))
            }
            for element in elements {
                if let target = element.sameAs, !elements.contains(where: { $0.identifier == target && $0.sameAs == nil }) {
                    throw fail("\(spaceName)/\(element.identifier): sameAs \(target) is not an element of the namespace")
                }
            }
            namespaces.append(DocumentType.Namespace(name: spaceName, elements: elements))
        }
        return DocumentType(docType: docType, otherDocTypes: others, title: title, sources: sources, namespaces: namespaces)
    }

    private static func known(_ keys: some Sequence<String>, _ allowed: Set<String>, _ fail: (String) -> CatalogueError) throws(CatalogueError) {
        if let unknown = keys.first(where: { !allowed.contains($0) }) { throw fail("unknown member \(unknown)") }
    }
}
