import Foundation
import HTTPService
import StatusFetch
import TestSupport
import Testing

/// The per-host limit, observed in the handler: how many requests it holds at once.
struct ConcurrencyTests {
    /// A server whose handler holds each request until `gate` opens.
    private static func heldServer(_ gate: Gate, _ probe: Probe) throws -> HTTPDaemon {
        try serve(probe: probe) { _ in
            gate.wait()
            return .text(200, "done")
        }
    }

    /// Two fetches to one host: with a limit of one, one is in the handler
    /// and the other waits for the host's slot (without the limit it would
    /// reach the handler and never wait); with a limit of two, the same
    /// observation sees them overlap.
    @Test(arguments: [1, 2])
    func fetchesToAHostOverlapUpToTheLimit(_ limit: Int) throws {
        let gate = Gate()
        let probe = Probe()
        let daemon = try Self.heldServer(gate, probe)
        defer {
            gate.open()
            daemon.stop()
        }
        var policy = insecurePolicy()
        policy.perHostConcurrency = limit
        let fetcher = StatusFetcher(policy: policy)
        let url = "http://127.0.0.1:\(daemon.port)/list"
        let fetches = Thread.detachedResults(2) { fetcher.fetch(FetchRequest(url: url, accept: "*/*")) }
        let settled = eventually(60) { probe.inFlight == limit && fetcher.waitingForSlot(host: "127.0.0.1", port: daemon.port) == 2 - limit }
        #expect(settled, "in the handler: \(probe.inFlight), waiting: \(fetcher.waitingForSlot(host: "127.0.0.1", port: daemon.port))")
        gate.open()
        let results = try fetches.wait()
        #expect(results.allSatisfy { $0.body == Array("done".utf8) })
        #expect(probe.requests == 2)
        #expect(probe.maxInFlight == limit)
    }

    /// The limit is per host and port: another server is not held up.
    @Test func otherHostsAreNotHeldUp() throws {
        let gate = Gate()
        let first = Probe()
        let second = Probe()
        let firstDaemon = try Self.heldServer(gate, first)
        let secondDaemon = try Self.heldServer(gate, second)
        defer {
            gate.open()
            firstDaemon.stop()
            secondDaemon.stop()
        }
        var policy = insecurePolicy()
        policy.perHostConcurrency = 1
        let fetcher = StatusFetcher(policy: policy)
        let urls = ["http://127.0.0.1:\(firstDaemon.port)/list", "http://127.0.0.1:\(secondDaemon.port)/list"]
        let fetches = Thread.detachedResults(2) { index in fetcher.fetch(FetchRequest(url: urls[index], accept: "*/*")) }
        #expect(eventually(60) { first.inFlight == 1 && second.inFlight == 1 })
        gate.open()
        #expect(try fetches.wait().allSatisfy { $0.body == Array("done".utf8) })
    }
}

/// Results of bodies running on threads of their own, to be waited for.
struct DetachedResults<T: Sendable>: Sendable {
    fileprivate let group: DispatchGroup
    fileprivate let results: Results<T>

    /// Every result, once all have come (at most two minutes).
    func wait() throws -> [T] {
        guard group.wait(timeout: .now() + 120) == .success else { throw TestFailure("the fetches did not finish") }
        return results.all
    }
}

fileprivate final class Results<T: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var values: [Int: T] = [:]
    private let count: Int

    init(count: Int) { self.count = count }

    func set(_ index: Int, _ value: T) {
        lock.lock()
        values[index] = value
        lock.unlock()
    }

    var all: [T] {
        lock.lock()
        defer { lock.unlock() }
        return (0..<count).compactMap { values[$0] }
    }
}

extension Thread {
    /// Starts `count` threads, each running `body` with its index.
    static func detachedResults<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> DetachedResults<T> {
        let group = DispatchGroup()
        let results = Results<T>(count: count)
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                results.set(index, body(index))
                group.leave()
            }
        }
        return DetachedResults(group: group, results: results)
    }

    static func detachedResults<T: Sendable>(_ count: Int, _ body: @escaping @Sendable () -> T) -> DetachedResults<T> {
        detachedResults(count) { (_: Int) in body() }
    }
}
