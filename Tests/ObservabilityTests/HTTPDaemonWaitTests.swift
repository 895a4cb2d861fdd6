import Foundation
import HTTPService
import Synchronization
import Testing
import TestSupport

/// What waits in the daemon holds no thread: a request whose answer comes
/// later (`HTTPLater`) and a stream with nothing to send sit suspended, so
/// one work thread still answers everything else; each gets its own answer
/// when it comes; and stopping the daemon with such connections held ends
/// them instead of aborting (libmicrohttpd's rule for suspended connections).
@Suite struct HTTPDaemonWaitTests {
    /// Sends a GET on a connection of its own.
    private func waiting(_ path: String, port: Int) throws -> RawSocket {
        let socket = try RawSocket(port: port)
        #expect(socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        return socket
    }

    /// Handed to the work queue or handled on the socket thread, a request whose answer comes later holds neither thread.
    @Test(arguments: [false, true])
    func answersThatComeLaterHoldNoThread(inline: Bool) throws {
        let pending = Mutex<[HTTPLater]>([])
        let limits = HTTPDaemon.Limits(connectionLimit: 256, connectionsPerAddress: 0, ioThreads: 1, workThreads: 1)
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: limits, runsInline: { _ in inline }) { request in
            guard request.path == "/wait" else { return .text(200, "now\n") }
            let later = HTTPLater()
            pending.withLock { $0.append(later) }
            return .later(later)
        }
        defer { daemon.stop() }
        let clients = 20
        let sockets = try (0..<clients).map { _ in try waiting("/wait", port: daemon.port) }
        #expect(eventually(20) { pending.withLock { $0.count } == clients }, "not every waiting request reached the handler")

        // The one work thread is free: an ordinary request is answered while the others wait.
        let now = try RawHTTP.request("GET", "/now", port: daemon.port)
        #expect(now.status == 200 && now.body == "now\n")

        // Each waiting client gets its own answer, given from this thread, last first.
        let laters = pending.withLock { $0 }
        for (index, later) in laters.enumerated().reversed() { #expect(later.complete(.text(200, "answer \(index);"))) }
        #expect(!laters[0].complete(.text(500, "again")), "a second answer counted")
        var answers = Set<String>()
        for socket in sockets {
            let text = socket.receive(until: ";", within: 20)
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(80))")
            if let body = text.split(separator: "\r\n\r\n").last { answers.insert(String(body)) }
        }
        #expect(answers == Set((0..<clients).map { "answer \($0);" }))
    }

    @Test func inlineRequestsAreAnsweredWhileEveryWorkThreadIsBusy() throws {
        let release = DispatchSemaphore(value: 0)
        let blocked = Atomic<Int>(0)
        let limits = HTTPDaemon.Limits(connectionLimit: 64, ioThreads: 1, workThreads: 1)
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: limits, runsInline: { $0.path == "/healthz" }) { request in
            guard request.path == "/slow" else { return .text(200, "ok\n") }
            blocked.add(1, ordering: .relaxed)
            release.wait()
            return .text(200, "slow\n")
        }
        defer { daemon.stop() }
        let slow = try (0..<3).map { _ in try waiting("/slow", port: daemon.port) }
        // The work thread is held by the first; the others wait in its queue.
        #expect(eventually(20) { blocked.load(ordering: .relaxed) == 1 })
        let health = try RawHTTP.request("GET", "/healthz", port: daemon.port)
        #expect(health.status == 200 && health.body == "ok\n")
        for _ in slow { release.signal() }
        for socket in slow { #expect(socket.receive(until: "slow", within: 20).hasSuffix("slow\n")) }
    }

    /// Requests pipelined on one connection, handled inline or queued: each gets its answer, in order.
    @Test(arguments: [false, true])
    func pipelinedRequestsAreEachAnswered(inline: Bool) throws {
        let limits = HTTPDaemon.Limits(connectionLimit: 64, connectionsPerAddress: 0, ioThreads: 16, workThreads: 2)
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: limits, runsInline: { _ in inline }) { request in
            // A handler that takes a moment (a database round trip), so the next request waits in the buffer meanwhile.
            usleep(500)
            return .text(200, "answer to \(request.path);")
        }
        defer { daemon.stop() }
        let clients = 8, rounds = 10
        let lost = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            for round in 0..<rounds {
                // A new connection for each pair, as a client with no pool would open.
                guard let socket = try? RawSocket(port: daemon.port) else { return lost.withLock { $0.append("client \(client): no connection") } }
                let paths = ["/c\(client)r\(round)a", "/c\(client)r\(round)b"]
                _ = socket.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined())
                let text = socket.receive(until: "answer to \(paths[1]);", within: 20)
                guard let first = text.range(of: "answer to \(paths[0]);"), let second = text.range(of: "answer to \(paths[1]);"),
                      first.upperBound <= second.lowerBound else {
                    return lost.withLock { $0.append("client \(client) round \(round): \(text.suffix(60))") }
                }
            }
        }
        #expect(lost.withLock { $0 }.isEmpty, "\(lost.withLock { $0 })")
    }

    /// A client that hangs up while its answer is still to come: the answer's maker is told (`whenAbandoned`), inline or queued.
    @Test(arguments: [false, true])
    func aClientThatLeavesAbandonsItsAnswer(inline: Bool) throws {
        let abandoned = Atomic<Int>(0), asked = Atomic<Int>(0)
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(ioThreads: 1, workThreads: 1), runsInline: { _ in inline }) { _ in
            let later = HTTPLater()
            later.whenAbandoned { abandoned.add(1, ordering: .relaxed) }
            asked.add(1, ordering: .relaxed)
            return .later(later)
        }
        defer { daemon.stop() }
        var clients: [RawSocket]? = try (0..<3).map { _ in try waiting("/wait", port: daemon.port) }
        #expect(eventually(20) { asked.load(ordering: .relaxed) == 3 })
        #expect(abandoned.load(ordering: .relaxed) == 0, "nobody has left yet")
        clients = nil
        #expect(eventually(20) { abandoned.load(ordering: .relaxed) == 3 }, "\(abandoned.load(ordering: .relaxed)) of 3 abandoned")
        _ = clients
    }

    @Test func aStreamSendsWhatItIsGivenAndEndsWhenTheClientGoes() throws {
        let ended = Atomic<Int>(0)
        let streams = Mutex<[HTTPStream]>([])
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(ioThreads: 1, workThreads: 1)) { _ in
            let stream = HTTPStream { ended.add(1, ordering: .relaxed) }
            streams.withLock { $0.append(stream) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: stream)
        }
        defer { daemon.stop() }
        var client: RawSocket? = try waiting("/events", port: daemon.port)
        #expect(eventually(20) { streams.withLock { $0.count } == 1 })
        let stream = try #require(streams.withLock { $0.first })
        #expect(stream.send(Array("data: one\n\n".utf8)))
        #expect(client!.receive(until: "data: one", within: 20).contains("data: one"))
        // Nothing queued: the connection waits suspended; the next chunk resumes it.
        #expect(stream.send(Array("data: two\n\n".utf8)))
        #expect(client!.receive(until: "data: two", within: 20).contains("data: two"))
        #expect(ended.load(ordering: .relaxed) == 0)

        // The client leaves (its socket closes): a suspended connection learns it at the next chunk, and the stream ends.
        client = nil
        #expect(eventually(20) { stream.send(Array(": ping\n\n".utf8)) == false && ended.load(ordering: .relaxed) == 1 },
                "the stream did not end after its client left")
    }

    @Test func stoppingWithWaitingRequestsAndStreamsEndsThem() throws {
        let pending = Mutex<[HTTPLater]>([])
        let ended = Atomic<Int>(0)
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(ioThreads: 2, workThreads: 2)) { request in
            if request.path == "/events" {
                return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")],
                                    stream: HTTPStream { ended.add(1, ordering: .relaxed) })
            }
            let later = HTTPLater()
            pending.withLock { $0.append(later) }
            return .later(later)
        }
        let waiters = try (0..<5).map { _ in try waiting("/wait", port: daemon.port) }
        let streams = try (0..<5).map { _ in try waiting("/events", port: daemon.port) }
        #expect(eventually(20) { pending.withLock { $0.count } == 5 })
        for stream in streams { #expect(stream.receive(until: "\r\n\r\n", within: 20).hasPrefix("HTTP/1.1 200")) }

        daemon.stop()
        // The streams ended with the daemon; the waiting clients were answered 503 or closed.
        #expect(ended.load(ordering: .relaxed) == 5)
        for waiter in waiters {
            let text = waiter.receive(until: "\u{0}", within: 20)
            #expect(text.isEmpty || text.hasPrefix("HTTP/1.1 503"), "\(text.prefix(80))")
        }
        // An answer that comes after the stop goes nowhere.
        #expect(pending.withLock { $0[0] }.complete(.text(200, "late")))
    }
}

@Suite struct WorkQueueTests {
    @Test func atMostMaxThreadsRunAtOnceAndIdleThreadsEnd() {
        let queue = WorkQueue(maxThreads: 3, name: "test-work", idleSeconds: 0.2)
        let running = Atomic<Int>(0), most = Atomic<Int>(0), done = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<12 {
            queue.submit {
                let now = running.add(1, ordering: .relaxed).newValue
                _ = most.max(now, ordering: .relaxed)
                release.wait()
                running.subtract(1, ordering: .relaxed)
                done.add(1, ordering: .relaxed)
            }
        }
        #expect(eventually(20) { running.load(ordering: .relaxed) == 3 })
        #expect(queue.queued == 9)
        for _ in 0..<12 { release.signal() }
        #expect(eventually(20) { done.load(ordering: .relaxed) == 12 })
        #expect(most.load(ordering: .relaxed) == 3)
        #expect(eventually(20) { queue.threadCount == 0 }, "idle threads did not end")
        // Work after that starts a thread again.
        let again = DispatchSemaphore(value: 0)
        queue.submit { again.signal() }
        #expect(again.wait(timeout: .now() + 20) == .success)
    }

    @Test func stopDropsQueuedJobsAndWaitsForRunningOnes() {
        let queue = WorkQueue(maxThreads: 1, name: "test-work")
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false), dropped = Atomic<Bool>(false)
        queue.submit {
            started.signal()
            release.wait()
            finished.store(true, ordering: .relaxed)
        }
        queue.submit { dropped.store(true, ordering: .relaxed) }
        #expect(started.wait(timeout: .now() + 20) == .success)
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            queue.stop()
            stopped.signal()
        }.start()
        // stop waits for the running job: it returns only after the job is let go.
        #expect(stopped.wait(timeout: .now() + 0.3) == .timedOut)
        release.signal()
        #expect(stopped.wait(timeout: .now() + 20) == .success)
        let (ran, droppedRan) = (finished.load(ordering: .relaxed), dropped.load(ordering: .relaxed))
        #expect(ran)
        #expect(!droppedRan)
        #expect(!queue.submit {})
    }
}
