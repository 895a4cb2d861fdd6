import Foundation

/// The two binaries `swift build` puts beside the test bundle, and the
/// checkout they were built from.
public enum Binaries {
    /// The build products folder: up from the test bundle to the first folder holding `veridoc`.
    public static let folder: URL = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("veridoc").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    /// The product: `run`, `verify`, `keys`, … .
    public static let veridoc = folder.appendingPathComponent("veridoc")
    /// The tooling: `demo`, `bench`, `chaos`, `dev-broker`, … .
    public static let veridocDev = folder.appendingPathComponent("veridoc-dev")

    /// The checkout: up from this file to the folder holding `scripts/test-postgres`.
    public static let repository: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("scripts/test-postgres").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()
}
