import JSON

/// A request's JSON body, read strictly: each field by name and type, and
/// `finish` refuses any field nobody took, so a misspelt field is a 400 that
/// names it rather than a silent default. Field names in errors are the
/// client's own paths ("requestedElements[2].namespace").
struct RequestBody {
    let path: String
    private let object: JSONObject
    /// The keys read: a handful per body, so a list beats a hash set. Keys
    /// match by their bytes, as JSONObject finds them: a canonically
    /// equivalent spelling of a field is another field, and unknown.
    private var taken: [String] = []

    /// The largest body's structure the parser accepts: requests are small and flat.
    static let parser = JSONParser(maxDepth: 8, maxMembers: 1_000)

    init(_ bytes: [UInt8]) throws(APIError) {
        guard let value = try? Self.parser.parse(bytes), let object = value.objectValue else { throw .malformedJSON }
        self.init(object, path: "")
    }

    init(_ object: JSONObject, path: String) {
        self.path = path
        self.object = object
    }

    func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private mutating func value(_ key: String) -> JSONValue? {
        if !wasTaken(key) { taken.append(key) }
        return object[key]
    }

    /// A string of 1…`maxBytes` UTF-8 bytes.
    mutating func string(_ key: String, maxBytes: Int = 256) throws(APIError) -> String? {
        guard let value = value(key) else { return nil }
        guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= maxBytes else {
            throw .invalidField(field(key), expected: "a non-empty string of at most \(maxBytes) bytes")
        }
        return text
    }

    mutating func requiredString(_ key: String, maxBytes: Int = 256) throws(APIError) -> String {
        guard let text = try string(key, maxBytes: maxBytes) else { throw .missingField(field(key)) }
        return text
    }

    mutating func integer(_ key: String, range: ClosedRange<Int>) throws(APIError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let number = value.integerValue.flatMap({ Int(exactly: $0) }), range.contains(number) else {
            throw .invalidField(field(key), expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    mutating func objects<T>(_ key: String, maxCount: Int, _ body: (inout RequestBody) throws(APIError) -> T) throws(APIError) -> [T]? {
        guard let value = value(key) else { return nil }
        guard let list = value.arrayValue, list.count <= maxCount else {
            throw .invalidField(field(key), expected: "an array of at most \(maxCount) objects")
        }
        var read: [T] = []
        for (index, item) in list.enumerated() {
            guard let object = item.objectValue else { throw .invalidField("\(field(key))[\(index)]", expected: "an object") }
            var element = RequestBody(object, path: "\(field(key))[\(index)]")
            read.append(try body(&element))
            try element.finish()
        }
        return read
    }

    mutating func object(_ key: String) throws(APIError) -> RequestBody? {
        guard let value = value(key) else { return nil }
        guard let object = value.objectValue else { throw .invalidField(field(key), expected: "an object") }
        return RequestBody(object, path: field(key))
    }

    /// An object taken as it is, for a member whose content another reader judges.
    mutating func rawObject(_ key: String) throws(APIError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard let object = value.objectValue else { throw .invalidField(field(key), expected: "an object") }
        return object
    }

    private func wasTaken(_ key: String) -> Bool { taken.contains { $0.utf8.elementsEqual(key.utf8) } }

    /// Refuses the first field (in document order) that nothing read.
    func finish() throws(APIError) {
        if let unknown = object.keys.first(where: { !wasTaken($0) }) { throw .unknownField(field(unknown)) }
    }
}
