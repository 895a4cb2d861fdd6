import Foundation
import Postgres
import Storage
import Synchronization

/// Wakes the long polls and event streams waiting on a session when its row
/// changes: one connection per serve process `LISTEN`s on
/// `SessionsTable.changesChannel` and fans each notification out in memory,
/// so a waiting client costs no database connection, no thread and no reads
/// while nothing happens. After the listener lost its connection (and so
/// perhaps notifications), it wakes every waiter to read again.
final class SessionNotifier: Sendable {
    /// One waiting client: woken (and counted) from the moment it is registered.
    final class Waiter: Sendable {
        let id: String
        /// Runs on the listener's thread: it must hand any work elsewhere and return.
        fileprivate let wake: @Sendable () -> Void
        init(id: String, wake: @escaping @Sendable () -> Void) {
            self.id = id
            self.wake = wake
        }
    }

    private let waiters = Mutex<[String: [ObjectIdentifier: Waiter]]>([:])
    private let stopping = Atomic<Bool>(false)
    /// Whether the listener's `LISTEN` is in place now.
    private let listening = Atomic<Bool>(false)
    var isListening: Bool { listening.load(ordering: .relaxed) }
    private let stopped = DispatchSemaphore(value: 0)

    init(connect: @escaping @Sendable () throws -> PostgresConnection) {
        let thread = Thread { [self] in
            listen(connect)
            stopped.signal()
        }
        thread.name = "session-notifier"
        thread.start()
    }

    /// Register before reading the row, so that a change committed after
    /// the read still wakes the waiter.
    func register(_ id: UUID, wake: @escaping @Sendable () -> Void) -> Waiter {
        let waiter = Waiter(id: id.uuidString.lowercased(), wake: wake)
        waiters.withLock { $0[waiter.id, default: [:]][ObjectIdentifier(waiter)] = waiter }
        return waiter
    }

    func unregister(_ waiter: Waiter) {
        waiters.withLock { all in
            all[waiter.id]?[ObjectIdentifier(waiter)] = nil
            if all[waiter.id]?.isEmpty == true { all[waiter.id] = nil }
        }
    }

    /// Clients waiting now (for tests and the drain).
    var waiting: Int { waiters.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        stopped.wait()
    }

    private func wake(_ id: String) {
        for waiter in waiters.withLock({ Array(($0[id] ?? [:]).values) }) { waiter.wake() }
    }

    /// Every waiter reads again (a lost connection, serve's drain).
    func wakeAll() {
        for waiter in waiters.withLock({ $0.values.flatMap(\.values) }) { waiter.wake() }
    }

    private func listen(_ connect: @Sendable () throws -> PostgresConnection) {
        while !stopping.load(ordering: .relaxed) {
            guard let connection = try? connect(), (try? connection.execute(SessionsTable.listenForChanges)) != nil else {
                Thread.sleep(forTimeInterval: 1)
                continue
            }
            // Whatever changed while no connection listened is read again by everyone waiting.
            listening.store(true, ordering: .relaxed)
            wakeAll()
            var lastRoundTrip = ProcessInfo.processInfo.systemUptime
            while !stopping.load(ordering: .relaxed) {
                guard let received = try? connection.notifications(waitingUpTo: 0.5) else { break }
                for notification in received where notification.channel == SessionsTable.changesChannel { wake(notification.payload) }
                // A half-open connection raises no error while it only waits: a round trip now and then finds it.
                if ProcessInfo.processInfo.systemUptime - lastRoundTrip > 15 {
                    guard (try? connection.execute(HealthProbe.statement)) != nil else { break }
                    lastRoundTrip = ProcessInfo.processInfo.systemUptime
                }
            }
            listening.store(false, ordering: .relaxed)
            connection.close()
        }
    }
}
