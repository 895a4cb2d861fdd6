import Foundation

/// A throwaway PostgreSQL cluster from Debian's binaries, the way embedded-
/// Postgres libraries do it: `initdb` into a folder, start on a free loopback
/// port, stop and delete afterwards. As root the server runs as `postgres`,
/// which PostgreSQL insists on.
public final class EmbeddedPostgres: @unchecked Sendable {
    public let directory: URL
    public let port: Int
    public var connectionString: String { "host=127.0.0.1 port=\(port) user=postgres dbname=postgres" }
    private let binaries: URL
    private var running = false
    private var interruption: Interruption.Token?

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// initdb + start. `directory` must not exist yet.
    public init(directory: URL) throws {
        self.directory = directory
        guard let binaries = Self.findBinaries() else {
            throw Failure(description: "PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)")
        }
        self.binaries = binaries
        port = try Self.freePort()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres:postgres", directory.path]) }
        let data = directory.appendingPathComponent("data").path
        try Self.runAsServerUser(binaries.appendingPathComponent("initdb").path, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale"])
        // wal_init_zero=off: this database is always new, so every 16 MB of WAL
        // it creates a segment, and by default zero-fills it inside whichever
        // commit needs it (every few thousand events of the demo's and bench's
        // load), which stalls that batch and adds to the server's CPU per event.
        // A server in service recycles old segments instead, so this is what a
        // measurement should see. Durability is unchanged (fsync and
        // synchronous_commit keep their defaults).
        try Self.runAsServerUser(binaries.appendingPathComponent("pg_ctl").path, [
            "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60",
            "-o", "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c wal_init_zero=off", "start",
        ])
        running = true
        let pgCtl = binaries.appendingPathComponent("pg_ctl").path
        interruption = Interruption.register {
            try? Self.runAsServerUser(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"])
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Stops the server (fast shutdown) and, unless `keepFiles`, deletes its folder.
    public func stop(keepFiles: Bool = false) {
        if let interruption { Interruption.unregister(interruption) }
        interruption = nil
        if running && !keepFiles {
            try? Self.runAsServerUser(binaries.appendingPathComponent("pg_ctl").path, ["-D", directory.appendingPathComponent("data").path, "-m", "fast", "-w", "stop"])
            running = false
        }
        if !keepFiles { try? FileManager.default.removeItem(at: directory) }
    }

    /// Leaves the server running and its files in place (`veridoc-dev demo --keep`).
    public func detach() {
        if let interruption { Interruption.unregister(interruption) }
        interruption = nil
        running = false
    }

    /// The postmaster's pid while running.
    public var serverPID: Int32? {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("data/postmaster.pid"), encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }

    deinit { if running { stop(keepFiles: false) } }

    private static func runAsServerUser(_ tool: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
        } else {
            try Self.run(tool, arguments)
        }
    }

    /// Runs a tool to completion (`Spawn`, then waitpid). Its output goes to a
    /// file: `pg_ctl start` leaves the server holding the descriptors it inherited.
    private static func run(_ tool: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-pg-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        guard let pid = Spawn.start(tool, arguments, stdout: log) else {
            throw Failure(description: "cannot start \(tool)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED && WEXITSTATUS == 0, spelled out: the macros do not import.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let message = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Failure(description: "\(URL(fileURLWithPath: tool).lastPathComponent) failed: \(message.suffix(500))")
        }
    }

    private static func findBinaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap(Int.init).sorted(by: >).map { root.appendingPathComponent("\($0)/bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("pg_ctl").path) }
    }

    /// A loopback port nobody is listening on (bound and released).
    static func freePort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(socketFD, pointer, length) == 0 && getsockname(socketFD, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
