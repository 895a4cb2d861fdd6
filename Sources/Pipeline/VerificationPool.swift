import FIFO
import Foundation
import Kafka
import Verification

/// Runs verification — synchronous CPU work — on a fixed set of threads sized
/// to the cores. Jobs with the same Kafka key run one at a time in arrival
/// order; different keys run concurrently, so a slow key never blocks the
/// rest of its partition.
///
/// `submit` blocks while `capacity` jobs are admitted and unfinished: that is
/// the backpressure the consumer loop turns into pausing partitions. A
/// blocked submitter resumes once an eighth of the capacity has drained, not
/// after every job: waking a thread is a futex call, and one per job takes a
/// measurable share of the verifying thread's time.
///
/// Waiters are counted so that a change wakes threads only when someone waits
/// for it (workers for work, submitters for room, `waitUntilIdle` for either).
package final class VerificationPool: @unchecked Sendable {
    // All mutable state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var ready = RingBuffer<Job>()
    /// Jobs behind a running job of the same key, in arrival order. A ring, popped
    /// in place: an array copied on every pop (the dictionary still holds it) would
    /// make each finished job cost as much as the jobs still waiting for its key,
    /// under the lock every thread takes.
    private var waitingByKey: [[UInt8]: RingBuffer<Job>] = [:]
    private var activeKeys: Set<[UInt8]> = []
    private var admitted = 0
    private var stopping = false
    private var threads: [Thread] = []
    private var waitingWorkers = 0
    private var waitingSubmitters = 0
    private var waitingForIdle = 0

    let capacity: Int
    /// A blocked `submit` resumes when no more than this many jobs are admitted.
    private let resumeAt: Int
    private let work: @Sendable (Job, _ finish: @escaping @Sendable (JobWork.Outcome) -> Void) -> Void
    private let deliver: @Sendable (JobWork.Outcome) -> Void

    package convenience init(threads count: Int, capacity: Int, verify: @escaping @Sendable (Job) -> JobWork.Outcome,
                             deliver: @escaping @Sendable (JobWork.Outcome) -> Void) {
        self.init(threads: count, capacity: capacity, work: { job, finish in finish(verify(job)) }, deliver: deliver)
    }

    /// `work` calls `finish` once, on the pool thread or later on another
    /// (a job waiting for a revocation list): the thread is free as soon as
    /// `work` returns, while the job stays admitted and its key held, so
    /// capacity still bounds what waits and jobs of one key still finish in
    /// arrival order.
    package init(threads count: Int, capacity: Int, work: @escaping @Sendable (Job, _ finish: @escaping @Sendable (JobWork.Outcome) -> Void) -> Void,
                 deliver: @escaping @Sendable (JobWork.Outcome) -> Void) {
        self.capacity = max(capacity, count)
        self.resumeAt = self.capacity - max(1, self.capacity / 8)
        self.work = work
        self.deliver = deliver
        for index in 0..<max(1, count) {
            threads.append(Thread.worker("verify-\(index)") { [unowned self] in self.run() })
        }
        threads.forEach { $0.start() }
    }

    /// True while there is room for another job without blocking.
    var hasCapacity: Bool {
        condition.lock()
        defer { condition.unlock() }
        return admitted < capacity
    }

    /// Waits up to `timeout` for room for another job; true when there is room.
    @discardableResult
    func waitForCapacity(timeout: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while admitted >= capacity && !stopping {
            // Woken like a blocked `submit`: once an eighth of the capacity has drained.
            waitingSubmitters += 1
            let signalled = condition.wait(until: deadline)
            waitingSubmitters -= 1
            if !signalled { break }
        }
        return admitted < capacity
    }

    /// Submitters blocked for room now (for tests: that a submit waits is
    /// observed, not guessed from a pause).
    var blockedSubmitters: Int {
        condition.lock()
        defer { condition.unlock() }
        return waitingSubmitters
    }

    /// Jobs admitted and not yet finished.
    var inFlight: Int {
        condition.lock()
        defer { condition.unlock() }
        return admitted
    }

    package func submit(_ job: Job) {
        condition.lock()
        defer { condition.unlock() }
        while admitted >= capacity && !stopping {
            waitingSubmitters += 1
            condition.wait()
            waitingSubmitters -= 1
        }
        admitted += 1
        if let key = job.key {
            if activeKeys.contains(key) {
                waitingByKey[key, default: RingBuffer()].append(job)
                return
            }
            activeKeys.insert(key)
        }
        ready.append(job)
        if waitingWorkers > 0 { condition.broadcast() }
    }

    /// Drops jobs that have not started and match `predicate` (revoked
    /// partitions); returns how many were dropped. Per-key order of the jobs
    /// that stay is kept, and a key whose head job was dropped moves on.
    func abandon(where predicate: (Job) -> Bool) -> Int {
        condition.lock()
        defer { condition.unlock() }
        var dropped = 0
        var keyless: [Job] = []
        var sequences: [[UInt8]: [Job]] = [:]
        var keyOrder: [[UInt8]] = []
        for job in ready {
            if let key = job.key {
                if sequences[key] == nil { keyOrder.append(key) }
                sequences[key, default: []].append(job)
            } else {
                keyless.append(job)
            }
        }
        for (key, jobs) in waitingByKey {
            if sequences[key] == nil { keyOrder.append(key) }
            sequences[key, default: []].append(contentsOf: jobs)
        }
        ready = RingBuffer(keyless.filter { job in
            if predicate(job) { dropped += 1; return false }
            return true
        })
        waitingByKey = [:]
        activeKeys = runningKeys
        for key in keyOrder {
            let jobs = sequences[key] ?? []
            let kept = jobs.filter { !predicate($0) }
            dropped += jobs.count - kept.count
            guard !kept.isEmpty else { continue }
            if runningKeys.contains(key) {
                waitingByKey[key] = RingBuffer(kept)
            } else {
                activeKeys.insert(key)
                ready.append(kept[0])
                if kept.count > 1 { waitingByKey[key] = RingBuffer(kept.dropFirst()) }
            }
        }
        admitted -= dropped
        condition.broadcast()
        return dropped
    }

    private var runningKeys: Set<[UInt8]> = []

    /// Waits until no admitted job matches `predicate`, or `timeout` passes.
    package func waitUntilIdle(timeout: TimeInterval, where predicate: @escaping (Job) -> Bool = { _ in true }) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while admittedMatching(predicate) > 0 {
            waitingForIdle += 1
            let signalled = condition.wait(until: deadline)
            waitingForIdle -= 1
            if !signalled { return admittedMatching(predicate) == 0 }
        }
        return true
    }

    private var runningJobs: [PartitionTracker.Ticket: Job] = [:]

    private func admittedMatching(_ predicate: (Job) -> Bool) -> Int {
        ready.filter(predicate).count + waitingByKey.values.joined().filter(predicate).count
            + runningJobs.values.filter(predicate).count
    }

    package func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        threads.removeAll()
    }

    private func run() {
        while true {
            condition.lock()
            while ready.isEmpty && !stopping {
                waitingWorkers += 1
                condition.wait()
                waitingWorkers -= 1
            }
            guard let job = ready.popFirst() else {
                condition.unlock()
                return
            }
            runningJobs[job.ticket] = job
            if let key = job.key { runningKeys.insert(key) }
            condition.unlock()

            // A strong reference: a job finished late still finds its pool.
            work(job) { outcome in self.finish(job, outcome) }
        }
    }

    /// Delivers a job's outcome and lets the next job of its key run.
    private func finish(_ job: Job, _ outcome: JobWork.Outcome) {
        deliver(outcome)
        condition.lock()
        runningJobs[job.ticket] = nil
        admitted -= 1
        var madeReady = false
        if let key = job.key {
            runningKeys.remove(key)
            if let next = waitingByKey[key]?.popFirst() {
                ready.append(next)
                if waitingByKey[key]?.isEmpty == true { waitingByKey[key] = nil }
                madeReady = true
            } else {
                activeKeys.remove(key)
            }
        }
        if waitingForIdle > 0 || (madeReady && waitingWorkers > 0) || (waitingSubmitters > 0 && admitted <= resumeAt) {
            condition.broadcast()
        }
        condition.unlock()
    }
}
