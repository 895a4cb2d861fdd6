import CommandLineSupport
import Deployment
import Foundation
import HTTPService
import MDoc
import Observability
import Pipeline
import SessionAPI
import Settings
import Verification

/// `veridoc serve --config FILE`: the session API on `serve.port`, and its
/// metrics and probes on `observability.port` (as the worker's), until
/// SIGTERM or SIGINT; then it stops taking connections, lets requests under
/// way finish, and exits 0. `/metrics` is on the second listener only: the
/// API port is the one exposed to clients.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let stop = StopFlag()
            let signals = SignalTrap { stop.set() }
            let deployment = try ConfigFile.read(ParsedArguments(arguments, options: ["--config"], flags: []))
            let settings = deployment.settings
            let log = Logger(minimum: Logger.Level(settings.observability.logLevel))
            log.routeLibraryLogs()
            let tenants = try APITenants.load(deployment)
            // Apple's web reader certificates are short-lived: say so a month ahead (the metrics
            // veridoc_web_reader_certificate_expiry_timestamp_seconds and
            // veridoc_openid4vp_verifier_certificate_expiry_timestamp_seconds say it all along).
            for tenant in deployment.tenants.tenants {
                for (name, notAfter) in [("web reader", tenant.webReader?.notAfter), ("OpenID4VP verifier", tenant.openID4VPVerifier?.notAfter)] {
                    guard let notAfter, notAfter.timeIntervalSinceNow < 30 * 86_400 else { continue }
                    log.warning(notAfter.timeIntervalSinceNow <= 0 ? "\(name) certificate expired: its sessions are refused" : "\(name) certificate expires soon",
                                ["tenant": tenant.id, "notAfter": RFC3339.string(from: notAfter)])
                }
                let unnamed = tenant.originsOutsideVerifierNames
                if !unnamed.isEmpty {
                    log.warning("no x509_san_dns OpenID4VP verifier certificate names these origins' hosts: a wallet that holds the origin to the client_id may refuse their requests",
                                ["tenant": tenant.id, "origins": unnamed.joined(separator: " ")])
                }
            }
            let tlsFiles = try tls(deployment)
            if tenants.keyring.isEmpty { log.warning("no tenant has apiKeys: every /v1 request will be 401") }
            guard let bootstrapServers = settings.kafka.bootstrapServers else {
                throw ConfigError("kafka.bootstrapServers: required (or set VERIDOC_KAFKA_BOOTSTRAP_SERVERS): serve produces the request events")
            }
            guard !settings.postgres.connectionString.isEmpty else {
                throw ConfigError("postgres.connectionString: required (or set VERIDOC_POSTGRES): serve keeps its sessions there")
            }
            let sessions = try SessionService(
                postgres: settings.postgres.connectionString, preparedStatements: settings.postgres.preparedStatements,
                connections: settings.serve.postgresConnections, bootstrapServers: bootstrapServers,
                kafkaProperties: settings.kafka.properties, requestTopic: settings.kafka.requestTopic, replayKey: try deployment.requiredReplayKey(),
                processingGrace: TimeInterval(settings.serve.processingGraceSeconds))
            defer { sessions.close() }
            // Not fatal: serve starts while the database is still coming up, and /readyz says so.
            // A schema newer than this binary is: that needs another binary, not time.
            if try !sessions.migrate() { log.warning("PostgreSQL cannot be reached yet: not ready until it can") }
            let api = SessionAPI(tenants: tenants, rateLimit: (settings.serve.requestsPerSecondPerKey, settings.serve.burstPerKey),
                                 sessions: sessions, maxBodyBytes: settings.worker.maxEventBytes,
                                 longPolls: (settings.serve.maxWaitingPollsPerTenant, settings.serve.maxConnections / 2),
                                 accessLog: settings.serve.accessLog ? log : nil, readiness: { sessions.readiness() })
            ProcessMetrics.register(in: api.registry, version: Version.veridoc)
            let serve = settings.serve
            let probes = try HTTPServer(port: settings.observability.port, loopbackOnly: serve.loopbackOnly,
                                        limits: ProbeLimits.of(settings.observability), registry: api.registry) { api.probeReadiness() }
            log.info("observability listening", ["port": "\(probes.port)"])
            let daemon = try HTTPDaemon(port: serve.port, loopbackOnly: serve.loopbackOnly,
                                        limits: HTTPDaemon.Limits(maxBodyBytes: settings.worker.maxEventBytes,
                                                                  connectionLimit: UInt32(serve.maxConnections),
                                                                  idleTimeoutSeconds: UInt32(serve.idleTimeoutSeconds),
                                                                  connectionsPerAddress: UInt32(serve.maxConnectionsPerAddress),
                                                                  headerTimeoutSeconds: Double(serve.headerTimeoutSeconds),
                                                                  bodyTimeoutSeconds: Double(serve.bodyTimeoutSeconds),
                                                                  ioThreads: Self.ioThreads(serve),
                                                                  // Submissions and readiness: what waits on the broker or an absent database.
                                                                  workThreads: max(4, serve.postgresConnections)),
                                        tls: tlsFiles, runsInline: SessionAPI.handlesInline) { api.handle($0) }
            log.info("session API listening", ["port": "\(daemon.port)", "tenants": "\(tenants.ids.count)", "tls": serve.tls == nil ? "off" : "on"])
            while !stop.isSet { Thread.sleep(forTimeInterval: 0.1) }
            // A drain: no new connections, long polls answered with the state as it
            // is, then what is under way gets `drainSeconds` to finish.
            log.info("stopping the session API: draining", ["drainSeconds": "\(serve.drainSeconds)"])
            daemon.quiesce()
            api.drain()
            // On a thread of its own: a handler stuck past the bound (a database
            // round trip that hangs) must not keep serve from exiting.
            let drainEnd = DispatchTime.now() + .seconds(serve.drainSeconds)
            let stopped = DispatchSemaphore(value: 0)
            Thread {
                if daemon.waitForRequests(timeout: TimeInterval(serve.drainSeconds)) {
                    daemon.stop()
                    stopped.signal()
                }
            }.start()
            if stopped.wait(timeout: drainEnd + .milliseconds(500)) == .timedOut {
                log.warning("requests still under way at the drain bound: exiting without them", ["drainSeconds": "\(serve.drainSeconds)"])
                // Handlers still run: exit's library teardown would pull their locks from under them.
                exitAfterFlushing(1)
            }
            probes.stop()
            log.info("session API stopped")
            withExtendedLifetime(signals) {}
        }
    }

    /// The certificate chain and key `serve.tls` names, as the deployment read them.
    /// Socket threads: most handlers run on them (`SessionAPI.handlesInline`),
    /// so twice the database connections, that all may be in use while
    /// requests that need none are read; and one per 256 connections, at
    /// most 64, since whenever one of a thread's suspended connections (a
    /// long poll, an event stream) resumes, libmicrohttpd looks through all
    /// of that thread's suspended connections.
    static func ioThreads(_ serve: ServeSettings) -> Int {
        min(64, max(2 * serve.postgresConnections, serve.maxConnections / 256, 1))
    }

    static func tls(_ deployment: Deployment) throws(ConfigError) -> HTTPDaemon.TLS? {
        guard let tls = deployment.serveTLS else { return nil }
        guard HTTPDaemon.supportsTLS else { throw ConfigError("serve.tls: this libmicrohttpd was built without TLS; terminate TLS in a proxy instead") }
        return HTTPDaemon.TLS(certificatePEM: tls.certificatePEM, keyPEM: tls.keyPEM)
    }
}
