import DemoKit
import Foundation

/// A child process started with posix_spawn and reaped with waitpid (never
/// Foundation's Process: its waitUntilExit can hang for runuser/pg_ctl).
/// Output goes to a file; for the broker, stdin and stdout can be pipes for its
/// control channel. Every descriptor above 2 is closed in the child, so no
/// child holds another's pipes open.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let name: String
    private(set) var exitStatus: Int32?
    /// Set when the child ended by a signal: the signal number.
    private(set) var exitSignal: Int32?
    let stdinWriter: FileHandle?
    let stdoutReader: FileHandle?
    private var buffer = Data()
    private let lock = NSLock()

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// `output`: a file for stdout+stderr (ignored for stdout when `controlPipes`).
    init(_ executable: String, _ arguments: [String], name: String, output: String, controlPipes: Bool = false,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.name = name
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        if controlPipes {
            guard pipe(&inPipe) == 0, pipe(&outPipe) == 0 else { throw Failure(description: "pipe() failed") }
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing above 2 is inherited (closefrom is not importable here).
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in open where descriptor > 2 { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { envp.forEach { free($0) } }
        var pid = pid_t()
        let rc = posix_spawn(&pid, executable, &actions, nil, argv + [nil], envp + [nil])
        if controlPipes {
            close(inPipe[0])
            close(outPipe[1])
        }
        guard rc == 0 else {
            if controlPipes { close(inPipe[1]); close(outPipe[0]) }
            throw Failure(description: "cannot start \(executable): errno \(rc)")
        }
        self.pid = pid
        if controlPipes {
            _ = fcntl(inPipe[1], F_SETFD, FD_CLOEXEC)
            _ = fcntl(outPipe[0], F_SETFD, FD_CLOEXEC)
            stdinWriter = FileHandle(fileDescriptor: inPipe[1], closeOnDealloc: true)
            stdoutReader = FileHandle(fileDescriptor: outPipe[0], closeOnDealloc: true)
        } else {
            stdinWriter = nil
            stdoutReader = nil
        }
    }

    /// Reaps the child if it has ended (non-blocking).
    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus != nil || exitSignal != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            record(status)
            return false
        }
        return result == 0
    }

    private func record(_ status: Int32) {
        if status & 0x7f == 0 { exitStatus = (status >> 8) & 0xff } else { exitSignal = status & 0x7f }
    }

    func signal(_ number: Int32) {
        if isRunning { _ = kill(pid, number) }
    }

    /// Waits for the child to end; false if it is still running after `timeout`.
    @discardableResult
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }

    /// SIGKILL and reap.
    func killNow() {
        signal(SIGKILL)
        wait(timeout: 10)
    }

    /// One line from the stdout pipe, within `timeout`.
    func readLine(timeout: TimeInterval) -> String? {
        guard let reader = stdoutReader else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = buffer.takeLine() { return line }
            var poller = pollfd(fd: reader.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(reader.fileDescriptor, &chunk, chunk.count)
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
        return nil
    }

    /// False when the child no longer reads its stdin (it died): write(2)
    /// then fails with EPIPE, which FileHandle.write would turn into a crash,
    /// and which is a SIGPIPE for a process that does not ignore it.
    @discardableResult
    func writeLine(_ line: String) -> Bool {
        guard let writer = stdinWriter else { return false }
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(writer.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// How it ended, for a report: "exit status 1", "signal 6"; nil while running.
    var ending: String? {
        guard !isRunning else { return nil }
        if let exitSignal { return "signal \(exitSignal)" }
        return exitStatus.map { "exit status \($0)" }
    }

    /// Whether /proc still lists the pid with `marker` in its command line
    /// (the marker tells a leftover from an unrelated process that reused the pid).
    static func exists(_ pid: pid_t, commandContaining marker: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(marker)
    }
}

/// Runs a tool to completion (posix_spawn + waitpid), output to `log`; returns the exit status.
@discardableResult
func runToCompletion(_ executable: String, _ arguments: [String], log: String, timeout: TimeInterval = 120) throws -> Int32 {
    let child = try ChildProcess(executable, arguments, name: URL(fileURLWithPath: executable).lastPathComponent, output: log)
    guard child.wait(timeout: timeout) else {
        child.killNow()
        throw ChildProcess.Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
    }
    return child.exitStatus ?? 128 + (child.exitSignal ?? 0)
}
