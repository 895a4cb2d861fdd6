import Crypto
import Foundation
import Testing
import TestSupport

/// Certificates and hex from the shared test vectors (TestSupport's `Vectors`).
enum X509Vectors {
    static var available: Bool { Vectors.available }

    static let skipReason: Comment = "test vectors not found: expected <packageRoot>/../shared/vectors or VERIDOC_VECTORS"

    static func text(_ relativePath: String) throws -> String {
        try Vectors.text(relativePath)
    }

    static func certificates(_ relativePath: String) throws -> [Certificate] {
        try Certificate.parsePEM(text(relativePath))
    }

    static func certificate(_ relativePath: String) throws -> Certificate {
        let all = try certificates(relativePath)
        guard all.count == 1, let only = all.first else { throw MissingVectors() }
        return only
    }

    /// Hex with any separators (colons, spaces) between the digits.
    static func hex(_ relativePath: String) throws -> [UInt8] {
        TestSupport.hex(String(try text(relativePath).filter(\.isHexDigit)))
    }

    struct MissingVectors: Error {}
}

/// Midnight UTC on `day` ("2022-04-01") or an exact instant ("2025-12-15T09:00:00Z").
func utc(_ day: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: day.contains("T") ? day : day + "T00:00:00Z")!
}
