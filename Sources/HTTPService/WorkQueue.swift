import FIFO
import Foundation

/// Threads for work that blocks (a database round trip, a broker's
/// acknowledgement), apart from the threads that move bytes: at most
/// `maxThreads` jobs run at once, the rest wait in order. Threads start when
/// work comes and none is idle, and end after `idleSeconds` without any, so a
/// queue that nobody stops holds no thread for long.
///
/// Unchecked Sendable: every field is under `lock`.
public final class WorkQueue: @unchecked Sendable {
    public let maxThreads: Int
    private let name: String
    private let idleSeconds: TimeInterval
    private let lock = NSCondition()
    /// Popped slots let go of their job at once: each holds its request.
    private var jobs = RingBuffer<@Sendable () -> Void>()
    private var threads = 0
    private var idle = 0
    /// Idle threads signalled and not yet awake: each takes one job, so a
    /// burst wakes as many as it has jobs, or starts new ones.
    private var wakes = 0
    private var running = 0
    private var stopped = false

    public init(maxThreads: Int, name: String, idleSeconds: TimeInterval = 10) {
        self.maxThreads = max(1, maxThreads)
        self.name = name
        self.idleSeconds = idleSeconds
    }

    /// Queues `job`; false (and nothing queued) once the queue is stopped.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return false }
        jobs.append(job)
        if idle > wakes {
            wakes += 1
            lock.signal()
        } else if threads < maxThreads {
            threads += 1
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
        return true
    }

    /// Jobs queued and not yet started.
    public var queued: Int {
        lock.lock()
        defer { lock.unlock() }
        return jobs.count
    }

    /// Threads alive now, running or idle.
    public var threadCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return threads
    }

    /// Refuses new jobs, drops the queued ones, and waits for those running to return.
    public func stop() {
        lock.lock()
        stopped = true
        jobs = RingBuffer()
        lock.broadcast()
        while running > 0 { lock.wait() }
        lock.unlock()
    }

    private func work() {
        lock.lock()
        while true {
            if let job = jobs.popFirst() {
                running += 1
                lock.unlock()
                job()
                lock.lock()
                running -= 1
                if stopped && running == 0 { lock.broadcast() }
                continue
            }
            if stopped { break }
            idle += 1
            let woken = lock.wait(until: Date(timeIntervalSinceNow: idleSeconds))
            idle -= 1
            if wakes > 0 { wakes -= 1 }
            if !woken && jobs.isEmpty { break }
        }
        threads -= 1
        lock.unlock()
    }
}
