import Foundation
import TestSupport

/// Runs the binaries built next to the test bundle: `veridoc`, or `veridoc-dev` with `dev`.
enum CLI {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ arguments: [String], stdin: Data? = nil, binary: URL = Binaries.veridoc, directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binary
        if let directory { process.currentDirectoryURL = directory }
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

    /// `veridoc-dev ARGUMENTS`.
    static func dev(_ arguments: [String]) throws -> Run {
        try run(arguments, binary: Binaries.veridocDev)
    }

    static var vectors: URL? { Vectors.root }
}
