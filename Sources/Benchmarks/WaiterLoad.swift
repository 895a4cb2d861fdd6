import Foundation
import HTTPService
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The waiters of section 7's held run (`WaitersBench`): long polls
/// (`GET /v1/sessions/{id}?wait=30`) and event streams
/// (`GET /v1/sessions/{id}/events`), one connection and one session each.
/// They are dealt into shards of about a hundred, each a thread that
/// poll(2)s its own sockets: poll's cost grows with the descriptors it is
/// handed, and every stream's heartbeat wakes its shard, so one thread over
/// thousands would take a share of the cores serve is measured on (Glibc's
/// Swift module has no epoll); a thread a connection is what serve is being
/// measured for, not what its clients should cost.
///
/// A poll answered without its outcome (its 30 s are up) asks again on the
/// same connection; a waiter refused (429, 503), cut off, or whose stream
/// ended without the outcome, asks again on a new connection after a second.
/// Each notes the instant (`systemUptime`, the completions' clock) it has
/// read its outcome whole: a poll's response, a stream's settled event.
final class WaiterLoad: Sendable {
    enum Kind: Sendable { case poll, stream }

    /// What one waiter saw.
    struct Seen: Sendable {
        var answeredAt: Double?
        /// Settled answers read: 1 once answered; more, a stream that told its end again.
        var answers = 0
    }

    /// What went otherwise than planned, all waiters together.
    struct Totals: Sendable {
        /// Answers other than 200 (429 over a cap, 503 without a database connection in time).
        var refusals = 0
        /// Connections closed by serve, or a stream ended, before the outcome.
        var reconnects = 0
        /// Polls answered unchanged at the end of their wait and asked again.
        var askedAgain = 0
        /// Settled answers that were not this waiter's session, verified, with its outcome.
        var wrong = 0
        /// Waiters settled (answered or wrong) and closed.
        var settled = 0
    }

    static let shardSize = 128

    let port: Int
    let kinds: [Kind]
    let sessions: [String]
    let requests: [[UInt8]]
    let openPerSecond: Double
    let shards: Int
    private let totals = Mutex(Totals())
    private let stopping = Atomic<Bool>(false)
    private let results = Mutex<[Int: Seen]>([:])
    private let finished = DispatchSemaphore(value: 0)

    /// Waiter `i` waits on `sessions[i]` as `kinds[i]`; they connect in order, `openPerSecond` a second.
    init(port: Int, apiKey: String, kinds: [Kind], sessions: [String], openPerSecond: Double) {
        self.port = port
        self.kinds = kinds
        self.sessions = sessions
        self.openPerSecond = openPerSecond
        shards = max(1, (kinds.count + Self.shardSize - 1) / Self.shardSize)
        requests = zip(kinds, sessions).map { kind, id in
            let target = kind == .poll ? "/v1/sessions/\(id)?wait=30" : "/v1/sessions/\(id)/events"
            return Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(apiKey)\r\n\r\n".utf8)
        }
    }

    var counts: Totals { totals.withLock { $0 } }

    func start() {
        let started = ProcessInfo.processInfo.systemUptime
        for shard in 0..<shards {
            let thread = Thread { [self] in
                run(shard: shard, started: started)
                finished.signal()
            }
            thread.name = "bench-waiters-\(shard)"
            thread.start()
        }
    }

    /// Stops every shard (closing what is still open) and returns what each waiter saw.
    func finish() -> [Seen] {
        stopping.store(true, ordering: .relaxed)
        for _ in 0..<shards { finished.wait() }
        return results.withLock { seen in kinds.indices.map { seen[$0] ?? Seen() } }
    }

    /// One connection's state, owned by its shard's thread.
    private struct Waiter {
        let index: Int
        var descriptor: Int32 = -1
        var unsent: ArraySlice<UInt8> = []
        var reader = ResponseReader()
        /// A stream's events not yet ended by their blank line.
        var events: [UInt8] = []
        var retryAt: Double = 0
        /// When the bytes being read came in: an answer's instant.
        var readAt: Double = 0
        /// A settled answer that was not the one expected came: nothing to wait for.
        var wrong = false
        var done = false
        var seen = Seen()
    }

    private func run(shard: Int, started: Double) {
        var waiters = stride(from: shard, to: kinds.count, by: shards).map { Waiter(index: $0) }
        var opened = 0, done = 0
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var polled: [pollfd] = [], slots: [Int] = []
        while !stopping.load(ordering: .relaxed), done < waiters.count {
            let now = ProcessInfo.processInfo.systemUptime
            while opened < waiters.count, started + Double(waiters[opened].index) / openPerSecond <= now {
                open(&waiters[opened])
                opened += 1
            }
            polled.removeAll(keepingCapacity: true)
            slots.removeAll(keepingCapacity: true)
            // Asleep until a socket is ready, something falls due (an opening, a retry) or a second passed (for `finish`): held waiters cost nothing while nothing comes.
            var due = opened < waiters.count ? started + Double(waiters[opened].index) / openPerSecond : now + 1
            for slot in 0..<opened where !waiters[slot].done {
                if waiters[slot].descriptor < 0 && waiters[slot].retryAt <= now { open(&waiters[slot]) }
                guard waiters[slot].descriptor >= 0 else {
                    due = min(due, waiters[slot].retryAt)
                    continue
                }
                polled.append(pollfd(fd: waiters[slot].descriptor, events: Int16(POLLIN) | (waiters[slot].unsent.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
                slots.append(slot)
            }
            _ = poll(&polled, nfds_t(polled.count), Int32(min(1_000, max(1, ((due - now) * 1_000).rounded(.up)))))
            for (entry, slot) in zip(polled, slots) where entry.revents != 0 {
                if entry.revents & Int16(POLLOUT) != 0 { flush(&waiters[slot]) }
                if entry.revents & ~Int16(POLLOUT) != 0 { receive(&waiters[slot], &buffer) }
                if waiters[slot].done { done += 1 }
            }
        }
        for waiter in waiters where waiter.descriptor >= 0 { close(waiter.descriptor) }
        results.withLock { seen in for waiter in waiters { seen[waiter.index] = waiter.seen } }
    }

    private func open(_ waiter: inout Waiter) {
        if waiter.descriptor >= 0 { close(waiter.descriptor) }
        waiter.reader = ResponseReader()
        waiter.events = []
        waiter.unsent = requests[waiter.index][...]
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return retry(&waiter, after: 1) }
        waiter.descriptor = descriptor
        if connectToLoopback(descriptor, port: port) != 0 && errno != EINPROGRESS { retry(&waiter, after: 1) }
    }

    /// Closed now, opened again after `seconds`.
    private func retry(_ waiter: inout Waiter, after seconds: Double) {
        if waiter.descriptor >= 0 { close(waiter.descriptor) }
        waiter.descriptor = -1
        waiter.retryAt = ProcessInfo.processInfo.systemUptime + seconds
    }

    private func settle(_ waiter: inout Waiter) {
        close(waiter.descriptor)
        waiter.descriptor = -1
        waiter.done = true
        totals.withLock { $0.settled += 1 }
    }

    private func flush(_ waiter: inout Waiter) {
        guard !waiter.unsent.isEmpty else { return }
        let sent = waiter.unsent.withUnsafeBytes { send(waiter.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent > 0 {
            waiter.unsent = waiter.unsent.dropFirst(sent)
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN {
            totals.withLock { $0.reconnects += 1 }
            retry(&waiter, after: 0)
        }
    }

    private func receive(_ waiter: inout Waiter, _ buffer: inout [UInt8]) {
        while waiter.descriptor >= 0 {
            let count = buffer.withUnsafeMutableBytes { recv(waiter.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            guard count > 0 else {
                // Closed (or reset) before this waiter's outcome.
                totals.withLock { $0.reconnects += 1 }
                return retry(&waiter, after: 0.1)
            }
            waiter.readAt = ProcessInfo.processInfo.systemUptime
            do {
                try waiter.reader.feed(buffer[..<count])
            } catch {
                totals.withLock { $0.reconnects += 1 }
                return retry(&waiter, after: 1)
            }
            read(&waiter)
        }
    }

    /// What the bytes read so far say: an answer, an event, or nothing yet.
    private func read(_ waiter: inout Waiter) {
        guard let status = waiter.reader.status else { return }
        guard status == 200 else {
            totals.withLock { $0.refusals += 1 }
            return retry(&waiter, after: 1)
        }
        switch kinds[waiter.index] {
        case .poll:
            guard waiter.reader.complete else { return }
            if answer(waiter.reader.takeBody(), to: &waiter) { return settle(&waiter) }
            totals.withLock { $0.askedAgain += 1 }
            waiter.reader = ResponseReader()
            waiter.unsent = requests[waiter.index][...]
            flush(&waiter)
        case .stream:
            waiter.events += waiter.reader.takeBody()
            while let end = ResponseReader.find([10, 10], in: waiter.events) {
                let event = String(decoding: waiter.events[..<end], as: UTF8.self)
                waiter.events.removeFirst(end + 2)
                guard let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else { continue }
                _ = answer(Array(data.dropFirst(6).utf8), to: &waiter)
            }
            // The stream ends after its last event: settled once that came, else asked again.
            guard waiter.reader.complete else { return }
            if waiter.seen.answers > 0 || waiter.wrong { return settle(&waiter) }
            totals.withLock { $0.reconnects += 1 }
            retry(&waiter, after: 1)
        }
    }

    /// Whether `body` (a session as `GET /v1/sessions/{id}` shows it) is settled; a settled one is counted.
    private func answer(_ body: [UInt8], to waiter: inout Waiter) -> Bool {
        let session = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        let status = session?["status"] as? String
        if status == "pending" || status == "processing" { return false }
        if status == "verified", session?["id"] as? String == sessions[waiter.index], session?["outcome"] != nil {
            waiter.seen.answers += 1
            if waiter.seen.answeredAt == nil { waiter.seen.answeredAt = waiter.readAt }
        } else {
            waiter.wrong = true
            totals.withLock { $0.wrong += 1 }
        }
        return true
    }
}
