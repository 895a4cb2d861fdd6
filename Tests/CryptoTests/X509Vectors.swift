import Crypto
import Foundation
import Testing

/// The shared test-vector folder: `<packageRoot>/../shared/vectors`, else `$VERIDOC_VECTORS`.
/// Tests that need it are skipped when neither exists.
enum X509Vectors {
    static let directory: URL? = {
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [packageRoot.appendingPathComponent("../shared/vectors").standardizedFileURL]
            + (ProcessInfo.processInfo.environment["VERIDOC_VECTORS"].map { [URL(fileURLWithPath: $0)] } ?? [])
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }()

    static var available: Bool { directory != nil }

    static let skipReason: Comment = "test vectors not found: expected <packageRoot>/../shared/vectors or VERIDOC_VECTORS"

    static func text(_ relativePath: String) throws -> String {
        guard let directory else { throw MissingVectors() }
        return try String(contentsOf: directory.appendingPathComponent(relativePath), encoding: .utf8)
    }

    static func certificates(_ relativePath: String) throws -> [Certificate] {
        try Certificate.parsePEM(text(relativePath))
    }

    static func certificate(_ relativePath: String) throws -> Certificate {
        let all = try certificates(relativePath)
        guard all.count == 1, let only = all.first else { throw MissingVectors() }
        return only
    }

    static func hex(_ relativePath: String) throws -> [UInt8] {
        try hexBytes(text(relativePath))
    }

    struct MissingVectors: Error {}
}

func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter(\.isHexDigit).utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map { index in
        UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16)!
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// Midnight UTC on `day` ("2022-04-01") or an exact instant ("2025-12-15T09:00:00Z").
func utc(_ day: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: day.contains("T") ? day : day + "T00:00:00Z")!
}
