import Foundation

/// Runs the `veridoc` binary built next to the test bundle.
enum CLI {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static let binary: URL = {
        // The test bundle lives in the build products folder beside the executable.
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("veridoc").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("veridoc")
    }()

    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let vectors: URL? = {
        if let override = ProcessInfo.processInfo.environment["VERIDOC_VECTORS"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("../shared/vectors").standardizedFileURL
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()
}
