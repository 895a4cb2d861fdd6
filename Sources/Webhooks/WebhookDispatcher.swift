import Foundation
import HTTPClient
import Observability
import Postgres
import Storage

/// Sends the deliveries the worker's transactions recorded: one control
/// thread that owns a PostgreSQL connection (claims due deliveries, records
/// how each attempt ended), and `webhooks.deliveryThreads` threads that sign
/// and POST them. Claims are made per endpoint and only for threads that are
/// idle, so a claimed delivery starts at once (its claim cannot run out
/// while it waits); each endpoint has at most `maxConcurrency` attempts
/// under way and starts at most `maxPerSecond`, across every worker of the
/// deployment (`WebhookEndpointLimits`), and the endpoints take turns at
/// the idle threads, so a slow or dead receiver holds at most its own
/// concurrency of them. The worker's commits never wait for any of it.
///
/// At least once: a claim lasts past the delivery's timeout, and one that
/// runs out (a crash, a stop) is claimed again, so a receiver may see a
/// delivery twice, always with the same `webhook-id`.
public final class WebhookDispatcher: @unchecked Sendable {
    private let directory: WebhookDirectory
    private let connect: @Sendable () throws -> PostgresConnection
    private let workerID: String
    private let client: HTTPClient
    private let policy: RetryPolicy
    private let metrics: WebhookMetrics?
    private let log: Logger
    private let endpoints: [Key: WebhookEndpoint]

    private struct Key: Hashable, Sendable {
        let tenant: String
        let endpoint: String
    }

    private struct Job: Sendable {
        let endpoint: WebhookEndpoint
        let delivery: WebhookDeliveriesTable.Claimed
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    /// Attempts a sending thread has taken and not yet finished.
    private var underWay = 0
    private var finished: [(Job, WebhookDeliveriesTable.Outcome)] = []
    private var stopping = false
    private var woken = false
    private var started: [Thread] = []
    private var running = 0

    /// `connect` opens the control thread's connection (again after a failure).
    public init(directory: WebhookDirectory, connect: @escaping @Sendable () throws -> PostgresConnection, workerID: String,
                metrics: WebhookMetrics?, log: Logger) {
        self.directory = directory
        self.connect = connect
        self.workerID = workerID
        self.metrics = metrics
        self.log = log
        let settings = directory.settings
        client = HTTPClient(timeoutSeconds: Double(settings.http.timeoutSeconds), connectTimeoutSeconds: Double(settings.http.connectTimeoutSeconds),
                            maxResponseBytes: settings.http.maxResponseBytes, overflow: .truncate,
                            addresses: settings.http.allowInsecure ? .any : .publicOnly, allowsPlainHTTP: settings.http.allowInsecure,
                            caFile: directory.caFile, userAgent: "veridoc-webhooks")
        policy = directory.retryPolicy
        var byKey: [Key: WebhookEndpoint] = [:]
        for endpoint in directory.endpoints { byKey[Key(tenant: endpoint.tenant, endpoint: endpoint.id)] = endpoint }
        endpoints = byKey
    }

    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard started.isEmpty, !endpoints.isEmpty else { return }
        var threads = [Thread(block: { [self] in control() })]
        threads += (0..<directory.settings.deliveryThreads).map { _ in Thread(block: { [self] in deliver() }) }
        for (index, thread) in threads.enumerated() {
            thread.name = index == 0 ? "veridoc-webhooks" : "veridoc-webhook-\(index)"
            running += 1
            thread.start()
        }
        started = threads
    }

    /// New deliveries may be due: claim now rather than at the next poll.
    public func wake() {
        condition.lock()
        woken = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops claiming, lets the attempts under way end (each within
    /// `webhooks.timeoutSeconds`) and records them, and returns when every
    /// thread has ended. Claimed deliveries not yet started are left to
    /// their claim's expiry, after which any worker sends them.
    public func stop() {
        condition.lock()
        stopping = true
        jobs.removeAll()
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    // MARK: the control thread

    private func control() {
        var connection: PostgresConnection?
        var disabled = Set<Key>()
        var lastRefresh = Date.distantPast
        var unrecorded: [(Job, WebhookDeliveriesTable.Outcome)] = []
        // Where the next claim's turn starts, so that no endpoint is always first at the idle threads.
        var turn = 0
        let order = endpoints.keys.sorted { ($0.tenant, $0.endpoint) < ($1.tenant, $1.endpoint) }
        // A delivery pending past the whole schedule and a week (its endpoint removed or never enabled again) dies.
        let maxPendingSeconds = directory.settings.retrySchedule.reduce(0, +) + 604_800
        // A claim outlives the attempt: another worker must not send it meanwhile.
        let claimSeconds = Double(directory.settings.http.timeoutSeconds + 30)
        defer { exitThread() }
        while true {
            condition.lock()
            unrecorded += finished
            finished.removeAll()
            let stop = stopping
            condition.unlock()
            // Stopping without a connection: what was not recorded is sent again once its claim runs out.
            if stop && connection == nil && !unrecorded.isEmpty && deliveriesUnderWay() == 0 { return }
            do {
                let db: PostgresConnection
                if let connection { db = connection } else { db = try connect(); connection = db }
                while let (job, outcome) = unrecorded.first {
                    try db.execute(WebhookDeliveriesTable.record(job.delivery, by: workerID, outcome))
                    unrecorded.removeFirst()
                    if case .endpointGone = outcome { disabled.insert(Key(tenant: job.delivery.tenant, endpoint: job.delivery.endpoint)) }
                }
                if stop {
                    // Attempts still under way end within their timeout; their outcomes are recorded, then this thread ends.
                    if deliveriesUnderWay() == 0 && finishedCount() == 0 { return }
                    waitForWork(seconds: 0.2)
                    continue
                }
                let now = Date()
                if now.timeIntervalSince(lastRefresh) >= 5 {
                    let gone = try db.execute(WebhookDeliveriesTable.disabledEndpoints)
                    disabled = Set((0..<gone.rowCount).compactMap { row in
                        gone.string(row, "tenant").flatMap { tenant in gone.string(row, "endpoint").map { Key(tenant: tenant, endpoint: $0) } }
                    })
                    let expired = try db.execute(WebhookDeliveriesTable.expire(olderThanSeconds: maxPendingSeconds, limit: 1_000))
                    for row in 0..<expired.rowCount {
                        if let tenant = expired.string(row, "tenant"), let endpoint = expired.string(row, "endpoint") {
                            metrics?.attempts.increment(tenant, endpoint, "expired")
                            log.warning("webhook delivery dead: pending past its schedule and a week", ["tenant": tenant, "endpoint": endpoint])
                        }
                    }
                    metrics?.disabledEndpoints.set(Double(disabled.count))
                    _ = try db.execute(WebhookDeliveriesTable.deleteFinished(olderThanHours: directory.settings.keepFinishedHours, limit: 1_000))
                    metrics?.pending.set(Double(try db.execute(WebhookDeliveriesTable.countPending).int(0, "count") ?? 0))
                    lastRefresh = now
                }
                let idle = directory.settings.deliveryThreads - deliveriesUnderWay()
                turn = order.isEmpty ? 0 : (turn + 1) % order.count
                let wants = (order[turn...] + order[..<turn]).filter { !disabled.contains($0) }.compactMap { key in
                    endpoints[key].map { endpoint in
                        WebhookEndpointLimits.Want(tenant: key.tenant, endpoint: key.endpoint, count: min(idle, endpoint.maxConcurrency),
                                                   maxConcurrency: endpoint.maxConcurrency, maxPerSecond: endpoint.maxPerSecond)
                    }
                }
                if idle > 0, !wants.isEmpty {
                    let claimed = try WebhookEndpointLimits.claim(wants, idle: idle, by: workerID, forSeconds: claimSeconds, on: db)
                    let new = claimed.compactMap { delivery in
                        endpoints[Key(tenant: delivery.tenant, endpoint: delivery.endpoint)].map { Job(endpoint: $0, delivery: delivery) }
                    }
                    if !new.isEmpty { enqueue(new) }
                    // Every idle thread got one: more may be due, look again at once.
                    if claimed.count == idle { continue }
                }
                waitForWork(seconds: 1)
            } catch {
                log.warning("webhook bookkeeping failed; retrying", ["code": (error as? PostgresError)?.sqlState ?? "connection"])
                connection = nil
                // Stopping without the database: what was not recorded is sent again once its claim runs out.
                if stop && deliveriesUnderWay() == 0 { return }
                waitForWork(seconds: stop ? 0.2 : 1)
            }
        }
    }

    private func enqueue(_ new: [Job]) {
        condition.lock()
        // Claimed as a stop came: left to their claims' expiry, like the rest.
        if !stopping { jobs += new }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until an attempt ends, `wake` is called, the dispatcher stops, or `seconds` pass.
    private func waitForWork(seconds: Double) {
        condition.lock()
        if finished.isEmpty && !woken {
            _ = condition.wait(until: Date().addingTimeInterval(seconds))
        }
        woken = false
        condition.unlock()
    }

    private func deliveriesUnderWay() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return underWay + jobs.count
    }

    private func finishedCount() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return finished.count
    }

    private func exitThread() {
        condition.lock()
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    // MARK: the delivery threads

    private func deliver() {
        defer { exitThread() }
        while let job = nextJob() {
            let outcome = attempt(job)
            condition.lock()
            underWay -= 1
            finished.append((job, outcome))
            condition.broadcast()
            condition.unlock()
        }
    }

    private func nextJob() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopping { condition.wait() }
        guard !stopping, !jobs.isEmpty else { return nil }
        underWay += 1
        return jobs.removeFirst()
    }

    /// One signed POST of the event as it was published, and what its answer means.
    private func attempt(_ job: Job) -> WebhookDeliveriesTable.Outcome {
        let delivery = job.delivery
        let body = Array(delivery.payload.utf8)
        let started = ContinuousClock.now
        let answer: Result<HTTPClient.Response, HTTPClient.Failure>
        do {
            let headers = try job.endpoint.signer.headers(id: delivery.webhookID, timestamp: Int(Date().timeIntervalSince1970), body: body)
            answer = Result { () throws(HTTPClient.Failure) in
                try client.send("POST", job.endpoint.url, headers: headers + [("content-type", "application/cloudevents+json; charset=utf-8")], body: body)
            }
        } catch {
            answer = .failure(.transfer("signing failed"))
        }
        let outcome = policy.outcome(answer, attempts: delivery.attempts, now: Date())
        let elapsed = started.duration(to: .now)
        metrics?.seconds.observe(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, delivery.tenant, delivery.endpoint)
        let fields = ["tenant": delivery.tenant, "endpoint": delivery.endpoint, "webhook_id": delivery.webhookID]
        switch outcome {
        case .delivered:
            metrics?.attempts.increment(delivery.tenant, delivery.endpoint, "delivered")
        case .retry(_, let status, let error):
            metrics?.attempts.increment(delivery.tenant, delivery.endpoint, "retried")
            log.info("webhook attempt failed; retrying on schedule", fields.merging(["error": error, "status": status.map(String.init) ?? "-",
                                                                                      "attempt": String(delivery.attempts + 1)]) { $1 })
        case .dead(let status, let error):
            metrics?.attempts.increment(delivery.tenant, delivery.endpoint, "dead")
            log.warning("webhook delivery dead after its last attempt (veridoc webhooks redeliver sends it again)",
                        fields.merging(["error": error, "status": status.map(String.init) ?? "-", "attempt": String(delivery.attempts + 1)]) { $1 })
        case .endpointGone:
            metrics?.attempts.increment(delivery.tenant, delivery.endpoint, "gone")
            log.warning("webhook endpoint answered 410 Gone: disabled until veridoc webhooks enable", fields)
        }
        return outcome
    }
}
