import Foundation

/// The shared test vectors, found next to the checkout (`<root>/../shared/vectors`)
/// or through `VERIDOC_VECTORS`. Tests that need them are disabled when absent.
/// The vectors are read in place and never copied into the repository.
public enum Vectors {
    public static let root: URL? = {
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["VERIDOC_VECTORS"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        candidates.append(Binaries.repository.appendingPathComponent("../shared/vectors", isDirectory: true).standardizedFileURL)
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }()

    public static var available: Bool { root != nil }

    /// Every public DeviceResponse the vectors hold that a wallet or issuer
    /// library produced (hex files relative to the root).
    public static let deviceResponses = [
        "apple-verify-with-wallet-sample/device_response.hex",
        "iso18013-5-annex-d/device_response.hex",
        "auth0-mdl/example1/device_response.hex", "auth0-mdl/example4/device_response.hex",
        "animo-mdoc/google-dcapi-oid4vp-draft24/device_response.hex", "animo-mdoc/ubique-oid4vp-draft18/device_response.hex",
        "animo-mdoc/animo-oid4vp-1.0/device_response.hex", "animo-mdoc/france-oid4vp-draft18/device_response.hex",
        "synthetic-pymdoccbor/valid-es384-ds-sha384/device_response.hex",
        "synthetic-pymdoccbor/policy-attached-device-payload/device_response.hex",
    ]

    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "test vector \(path) not found (set VERIDOC_VECTORS or place shared/vectors next to the package)" }
    }

    public static func url(_ relativePath: String) throws -> URL {
        guard let root else { throw Missing(path: relativePath) }
        return root.appendingPathComponent(relativePath)
    }

    public static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }

    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try data(relativePath))
    }

    public static func text(_ relativePath: String) throws -> String {
        String(decoding: try data(relativePath), as: UTF8.self)
    }

    /// A `.hex` file: one line of hex.
    public static func hex(_ relativePath: String) throws -> [UInt8] {
        TestSupport.hex(try text(relativePath))
    }

    /// A JSON file, as Foundation reads it.
    public static func json(_ relativePath: String) throws -> Any {
        try JSONSerialization.jsonObject(with: data(relativePath))
    }

    /// A JSON file that holds an object.
    public static func jsonObject(_ relativePath: String) throws -> [String: Any] {
        guard let object = try json(relativePath) as? [String: Any] else {
            throw Missing(path: relativePath + " (not a JSON object)")
        }
        return object
    }
}
