import Foundation

/// Runs a program to its end and returns its exit status and stdout (stderr
/// too with `mergingStandardError`, else discarded).
public enum Subprocess {
    public struct Result {
        public let status: Int32
        public let output: String
    }

    public static func run(_ executable: URL, _ arguments: [String], mergingStandardError: Bool = false) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = mergingStandardError ? output : FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// `run`, throwing unless the program exits 0; its stdout.
    public static func output(_ executable: URL, _ arguments: [String]) throws -> String {
        let result = try run(executable, arguments)
        guard result.status == 0 else {
            throw TestFailure("\(executable.lastPathComponent) \(arguments.first ?? "") exited \(result.status)")
        }
        return result.output
    }
}
