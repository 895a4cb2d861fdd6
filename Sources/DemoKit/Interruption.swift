import Foundation
import Synchronization

/// Cleanups for what a command started outside its own process — a
/// PostgreSQL server, worker processes, their folders — run when the command
/// is interrupted. Without them Ctrl-C on `make demo` or `make bench` would
/// leave a postmaster and workers running, and their folders (the demo
/// tenant's private keys among them) on disk: `defer` and `deinit` do not run
/// when a signal ends the process.
public enum Interruption {
    public typealias Token = CleanupList.Token

    static let cleanups = CleanupList()
    private static let sources = Mutex<[DispatchSourceSignal]>([])

    /// `cleanup` runs if SIGINT or SIGTERM ends the process before `unregister`.
    /// It must capture what it stops (a pid, a path), not the object owning it,
    /// so the owner's own `deinit` still runs in the normal case.
    public static func register(_ cleanup: @escaping @Sendable () -> Void) -> Token {
        cleanups.add(cleanup)
    }

    public static func unregister(_ token: Token) {
        cleanups.remove(token)
    }

    /// From now on SIGINT and SIGTERM run every registered cleanup, newest
    /// first (workers before the database they write to, the database before
    /// its folder), then exit with 128 + the signal's number, as a shell
    /// reports a process a signal ended.
    public static func installHandlers() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    cleanups.runAll()
                    // _exit, not exit: the other threads are still running, and
                    // atexit handlers and static destructors racing them could crash.
                    fflush(nil)
                    _exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}

/// Cleanups in registration order; `runAll` runs and forgets them, newest first.
public final class CleanupList: Sendable {
    public struct Token: Sendable, Hashable {
        fileprivate let value: UInt64
    }

    private struct State {
        var next: UInt64 = 1
        var entries: [(token: UInt64, run: @Sendable () -> Void)] = []
    }

    private let state = Mutex(State())

    init() {}

    func add(_ cleanup: @escaping @Sendable () -> Void) -> Token {
        state.withLock { state in
            let token = state.next
            state.next += 1
            state.entries.append((token, cleanup))
            return Token(value: token)
        }
    }

    func remove(_ token: Token) {
        state.withLock { $0.entries.removeAll { $0.token == token.value } }
    }

    /// Taken out under the lock, run outside it: a cleanup may take its time (`pg_ctl stop`).
    func runAll() {
        let entries = state.withLock { state in
            defer { state.entries.removeAll() }
            return state.entries
        }
        for entry in entries.reversed() { entry.run() }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
