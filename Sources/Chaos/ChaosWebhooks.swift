import Foundation

/// The tenant's webhook endpoint in a chaos run: the receiver it points at,
/// the secrets it signs with, and the operator's side of the faults (enabling
/// the endpoint after a 410, rotating its secret). Deliveries live in
/// PostgreSQL, so unlike outcome events on a memory-only broker, none is
/// excused by a broker restart.
final class ChaosWebhooks: @unchecked Sendable {
    let receiver: ChaosReceiver
    private let config: URL
    private let veridoc: URL
    private let work: URL
    private let log: @Sendable (String) -> Void

    // Guarded by `lock`.
    private let lock = NSLock()
    /// The secret files the endpoint names now (relative to the config), and their whsec_ texts.
    private var secrets: [(file: String, text: String)] = []
    private var serial = 0
    private var tenant = ""

    /// Retries close together, so that a delivery a fault failed comes again
    /// within the run; long enough (about 4.5 minutes in all) that no fault
    /// here outlasts it.
    static let retrySchedule = [1, 1, 2, 2, 3, 3, 5, 5, 8, 8, 10, 10, 15, 15, 20, 20, 30, 30, 30, 30]
    /// A slow answer takes longer than this (`receiverSlow`).
    static let timeoutSeconds = 4

    init(options: ChaosOptions, work: URL, config: URL, log: @escaping @Sendable (String) -> Void, started: @escaping (ChildProcess) -> Void) {
        self.config = config
        self.work = work
        self.log = log
        veridoc = options.worker
        let first = Self.newSecret()
        receiver = ChaosReceiver(repository: options.repository, work: work, secrets: [first], started: started)
        secrets = [("hook-1.whsec", first)]
        serial = 1
    }

    static func newSecret() -> String {
        "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// Starts the receiver and adds its endpoint to the first tenant, and the
    /// deployment's webhooks section, to the workers' configuration.
    func configure(_ root: inout [String: Any]) throws {
        try receiver.start()
        lock.lock()
        let current = secrets
        lock.unlock()
        for secret in current { try write(secret) }
        guard var tenants = root["tenants"] as? [[String: Any]], var first = tenants.first, let id = first["id"] as? String else {
            throw ChildProcess.Failure(description: "the chaos configuration has no tenant")
        }
        first["webhooks"] = [["id": ChaosReceiver.endpoint, "url": receiver.url, "secrets": current.map(\.file)]]
        tenants[0] = first
        root["tenants"] = tenants
        root["webhooks"] = ["allowInsecureTargets": true, "retrySchedule": Self.retrySchedule, "timeoutSeconds": Self.timeoutSeconds,
                            "connectTimeoutSeconds": 2]
        lock.lock()
        tenant = id
        lock.unlock()
        log("webhook receiver at \(receiver.url)")
    }

    private func write(_ secret: (file: String, text: String)) throws {
        let url = config.deletingLastPathComponent().appendingPathComponent(secret.file)
        guard FileManager.default.createFile(atPath: url.path, contents: Data((secret.text + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ChildProcess.Failure(description: "cannot write \(url.path)")
        }
    }

    /// `veridoc webhooks enable`, as an operator takes back an endpoint that answered 410.
    @discardableResult
    func enableEndpoint() -> Bool {
        lock.lock()
        let tenant = self.tenant
        lock.unlock()
        let status = try? runToCompletion(veridoc.path, ["webhooks", "enable", "--config", config.path, "--tenant", tenant, "--endpoint", ChaosReceiver.endpoint],
                                          log: work.appendingPathComponent("webhooks-enable.log").path, timeout: 30)
        return status == 0
    }

    /// A rotation as docs/webhooks.md tells it: the receiver learns the new
    /// secret, the endpoint signs with both (a rolling restart), then with
    /// the new one alone (another), then the receiver forgets the old one.
    /// Every delivery meanwhile must verify under what the receiver holds.
    func rotateSecret(rollingRestart: () -> Void) -> Bool {
        lock.lock()
        serial += 1
        let next = (file: "hook-\(serial).whsec", text: Self.newSecret())
        let old = secrets
        lock.unlock()
        do {
            try write(next)
            receiver.setSecrets(old.map(\.text) + [next.text])
            try setEndpointSecrets(old + [next])
            rollingRestart()
            try setEndpointSecrets([next])
            rollingRestart()
            receiver.setSecrets([next.text])
            return true
        } catch {
            log("secret rotation failed: \(error)")
            return false
        }
    }

    /// Rewrites the endpoint's secrets in the configuration (atomically: a
    /// worker the watchdog starts meanwhile reads the old file or the new).
    private func setEndpointSecrets(_ files: [(file: String, text: String)]) throws {
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as! [String: Any]
        var tenants = root["tenants"] as! [[String: Any]]
        var endpoints = tenants[0]["webhooks"] as! [[String: Any]]
        endpoints[0]["secrets"] = files.map(\.file)
        tenants[0]["webhooks"] = endpoints
        root["tenants"] = tenants
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: config, options: .atomic)
        lock.lock()
        secrets = files
        lock.unlock()
    }

    /// Once the faults stop: the receiver up, no answer left queued, the endpoint enabled.
    func restore() {
        if !receiver.isRunning {
            do { try receiver.start() } catch { log("webhook receiver: \(error)") }
        }
        receiver.queue([], clearingFirst: true)
        enableEndpoint()
    }
}
