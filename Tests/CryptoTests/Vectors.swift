import Foundation

/// The shared test vectors, found next to the package (`<root>/../shared/vectors`)
/// or through `VERIDOC_VECTORS`. Tests that need them are disabled when absent.
enum Vectors {
    static let root: URL? = {
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["VERIDOC_VECTORS"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        // Tests/CryptoTests/Vectors.swift → package root is three levels up.
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

    static func text(_ relativePath: String) throws -> String {
        String(decoding: try data(relativePath), as: UTF8.self)
    }

    /// A `.hex` file: one line of hex.
    static func hex(_ relativePath: String) throws -> [UInt8] {
        CryptoTests.hex(try text(relativePath))
    }

    static func json(_ relativePath: String) throws -> Any {
        try JSONSerialization.jsonObject(with: data(relativePath))
    }
}

let vectorsAvailable = Vectors.available
