import Foundation

/// The shared test vectors, found next to the package (`<root>/../shared/vectors`)
/// or through `VERIDOC_VECTORS`. Tests that need them are disabled when absent.
/// The vectors are read in place and never copied into the repository.
enum Vectors {
    static let root: URL? = {
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["VERIDOC_VECTORS"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        // Tests/VerificationTests/Vectors.swift → package root is three levels up.
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent("../shared/vectors", isDirectory: true).standardizedFileURL)
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }()

    static var available: Bool { root != nil }

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "test vector \(path) not found (set VERIDOC_VECTORS or place shared/vectors next to the package)" }
    }

    static func url(_ relativePath: String) throws -> URL {
        guard let root else { throw Missing(path: relativePath) }
        return root.appendingPathComponent(relativePath)
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try data(relativePath))
    }

    static func text(_ relativePath: String) throws -> String {
        String(decoding: try data(relativePath), as: UTF8.self)
    }

    /// A `.hex` file: one line of hex.
    static func hex(_ relativePath: String) throws -> [UInt8] {
        VerificationTests.hex(try text(relativePath))
    }

    static func json(_ relativePath: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: data(relativePath)) as? [String: Any] else {
            throw Missing(path: relativePath + " (not a JSON object)")
        }
        return object
    }
}

/// Lowercase or uppercase hex (whitespace ignored) to bytes; test inputs only.
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }.utf8.map { byte -> UInt8 in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: fatalError("not a hex digit in test data")
        }
    }
    precondition(digits.count % 2 == 0, "odd-length hex in test data")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let text = String(byte, radix: 16)
        return byte < 16 ? "0" + text : text
    }.joined()
}
