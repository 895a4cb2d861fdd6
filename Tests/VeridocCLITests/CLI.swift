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

    /// A worker's config in `folder` against `postgres`, a broker nobody
    /// listens on, and the keys and nonce key it names, written there too.
    static func workerConfig(in folder: URL, postgres: String) throws -> URL {
        let keys = folder.appendingPathComponent("keys")
        guard try run(["keys", "generate", keys.path]).status == 0 else { throw TestFailure("veridoc keys generate failed") }
        let nonceKey = folder.appendingPathComponent("nonce.key")
        try Data((0..<32).map { UInt8($0) }).write(to: nonceKey)
        chmod(nonceKey.path, 0o600)
        let config = folder.appendingPathComponent("config.json")
        try Data(#"""
            {"tenants": [{"id": "t", "trustAnchors": ["keys/merchant-cert.pem"]}], "kafka": {"bootstrapServers": "127.0.0.1:9"},
             "replay": {"nonceKeyFile": "nonce.key"}, "postgres": {"connectionString": "\#(postgres)"},
             "serve": {"port": 0, "loopbackOnly": true}, "observability": {"port": 0}}
            """#.utf8).write(to: config)
        return config
    }

    /// A fresh test database, a folder of its own and a worker config for both.
    struct WorkerSetup {
        let database: TestDatabase
        let folder: URL
        let config: URL

        init() throws {
            database = try TestDatabase()
            folder = try CLI.temporaryDirectory()
            config = try CLI.workerConfig(in: folder, postgres: database.connectionString)
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// `veridoc ARGUMENTS` started, its stderr written to `log` (made empty
    /// first) and its stdout dropped; the caller waits and stops it.
    static func start(_ arguments: [String], stderrTo log: URL) throws -> Process {
        let process = Process()
        process.executableURL = Binaries.veridoc
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// `veridoc-dev ARGUMENTS`.
    static func dev(_ arguments: [String]) throws -> Run {
        try run(arguments, binary: Binaries.veridocDev)
    }

    static var vectors: URL? { Vectors.root }
}
