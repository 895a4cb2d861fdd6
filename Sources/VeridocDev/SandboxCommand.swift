import CommandLineSupport
import Crypto
import DemoKit
import Deployment
import Foundation
import HTTPService
import JSON
import KafkaMock
import Observability
import Pipeline
import Postgres
import SessionAPI
import Storage
import TestIssuer

/// `veridoc-dev sandbox [--dir DIR] [--port PORT]`: a whole Veridoc on one
/// machine for an integrator's first session. Its own PostgreSQL and
/// broker, the worker, and the session API on PORT, with two tenants: a
/// test tenant (Apple's test conditions) that trusts the sandbox's test
/// issuer, whose documents `veridoc-dev wallet` presents, and a production
/// tenant that does not. Writes DIR/sandbox.env (the URL and both API
/// keys, readable by its owner only) and runs until SIGINT or SIGTERM.
enum SandboxCommand {
    static let testTenant = "sandbox"
    static let productionTenant = "production"

    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.returning(usage: Usage.text, failure: "sandbox failed") {
            let parsed = try ParsedArguments(arguments, options: ["--dir", "--port"], flags: [])
            guard parsed.positional.isEmpty else { throw UsageError("sandbox takes options only") }
            let directory = URL(fileURLWithPath: parsed.options["--dir"] ?? "/tmp/veridoc-sandbox")
            let port = try parsed.options["--port"].map { text throws(UsageError) -> Int in
                guard let port = Int(text), (0...65535).contains(port) else { throw UsageError("--port must be 0…65535") }
                return port
            } ?? 8080
            try Sandbox.requireOwn(directory)
            try Sandbox(directory: directory, port: port).run()
            return ExitStatus.success
        }
    }
}

/// The sandbox's parts, started in order and stopped in reverse.
final class Sandbox {
    let directory: URL
    let port: Int

    init(directory: URL, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// A sandbox folder someone else made (in /tmp anyone may) could hand
    /// this user a test issuer, keys or a URL of theirs: refused.
    static func requireOwn(_ directory: URL) throws {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: directory.path) else { return }
        guard let owner = attributes[.ownerAccountID] as? NSNumber, owner.uint32Value == getuid() else {
            throw UsageError("\(directory.path) belongs to another user: choose another --dir")
        }
    }

    func run() throws {
        // Readable by others: PostgreSQL runs as its own user and keeps its data below; the key files in it are 0600.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let stop = DispatchSemaphore(value: 0)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let signals = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        // A previous run's: what waits for this file must not read stale keys.
        let environment = directory.appendingPathComponent("sandbox.env")
        try? FileManager.default.removeItem(at: environment)

        // The test issuer and the merchant keys, kept across runs so a wallet made earlier still matches.
        let (factory, _) = try LoadFixture.openOrCreate(directory.appendingPathComponent("fixture"), seed: 2026)
        say("Starting PostgreSQL …")
        let postgres = try EmbeddedPostgres(directory: directory.appendingPathComponent("pg"))
        defer { postgres.stop() }
        say("Starting the broker (librdkafka mock cluster) …")
        let cluster = try MockCluster(brokers: 1)
        defer { cluster.close() }
        for topic in ["veridoc.requests", "veridoc.outcomes", "veridoc.requests.dlq"] { try cluster.createTopic(topic, partitions: 3) }

        // API keys as `veridoc keys api-key` makes them.
        let keys = (test: "vdk_" + Base64.encodeURL(secureRandomBytes(32)), production: "vdk_" + Base64.encodeURL(secureRandomBytes(32)))
        let configURL = try writeConfiguration(factory: factory, keys: keys, postgres: postgres.connectionString, bootstrap: cluster.bootstrapServers)
        let deployment = try Deployment.load(from: configURL)
        let log = Logger(minimum: .warning)
        let migration = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-sandbox")
        try Migrations.apply(on: migration)

        say("Starting the worker …")
        let worker = try Worker(configuration: try WorkerConfiguration.load(deployment), directory: deployment.tenants, log: log)
        let workerDone = DispatchSemaphore(value: 0)
        Thread {
            do { try worker.run() } catch { FileHandle.standardError.write(Data("sandbox: worker failed: \(error)\n".utf8)) }
            workerDone.signal()
        }.start()
        defer {
            worker.requestStop()
            workerDone.wait()
        }

        say("Starting the session API …")
        let settings = deployment.settings
        let sessions = try SessionService(postgres: postgres.connectionString, preparedStatements: true, connections: 4,
                                          bootstrapServers: cluster.bootstrapServers, kafkaProperties: [:],
                                          requestTopic: settings.kafka.requestTopic, replayKey: try deployment.requiredReplayKey())
        defer { sessions.close() }
        let api = SessionAPI(tenants: try APITenants.load(deployment), rateLimit: (100, 200), sessions: sessions, maxBodyBytes: settings.worker.maxEventBytes,
                             accessLog: log)
        let daemon = try HTTPDaemon(port: port, loopbackOnly: true, limits: HTTPDaemon.Limits(maxBodyBytes: settings.worker.maxEventBytes)) { api.handle($0) }
        defer { daemon.stop() }
        let url = "http://127.0.0.1:\(daemon.port)"
        let exports = "VERIDOC_URL=\(url)\nVERIDOC_API_KEY=\(keys.test)\nVERIDOC_PRODUCTION_API_KEY=\(keys.production)\nVERIDOC_ORIGIN=\(factory.merchant.origin)\n"
            + "VERIDOC_MERCHANT_ID=\(factory.merchant.merchantID)\n"
        guard FileManager.default.createFile(atPath: environment.path, contents: Data(exports.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("cannot write \(environment.path)")
        }
        say("""
            Sandbox ready (Ctrl-C stops it).
              session API     \(url)
              test tenant     \(SandboxCommand.testTenant) (test conditions: test_verified outcomes)
              prod tenant     \(SandboxCommand.productionTenant) (does not trust the sandbox's issuer)
              origin          \(factory.merchant.origin)     merchant id \(factory.merchant.merchantID)
              API keys, URL   \(environment.path)  (. it into your shell)
              a wallet        veridoc-dev wallet --sandbox \(directory.path) --session FILE
            """)
        stop.wait()
        say("Stopping the sandbox …")
        daemon.quiesce()
        api.drain()
        _ = daemon.waitForRequests(timeout: 5)
    }

    /// `sandbox.json`: the two tenants, the embedded services and a nonce key.
    private func writeConfiguration(factory: TestIssuer.EventFactory, keys: (test: String, production: String), postgres: String,
                                    bootstrap: String) throws -> URL {
        func write(_ text: String, _ name: String, _ permissions: Int) throws {
            let path = directory.appendingPathComponent(name).path
            try? FileManager.default.removeItem(atPath: path)
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: permissions]) else {
                throw UsageError("cannot write \(path)")
            }
        }
        try write(Data(secureRandomBytes(32)).base64EncodedString(), "nonce.key", 0o600)
        // A production tenant trusts a real IACA: here one the sandbox's issuer is not under.
        try write(TestIssuer.PEM.certificates([try TestIssuer.Authority(now: Date(), name: "Elsewhere").iaca]), "production-iaca.pem", 0o644)
        let merchant = factory.merchant
        let common: [String: Any] = ["merchantIds": [merchant.merchantID], "teamId": merchant.teamID,
                                     "encryptionKeys": ["fixture/pki/merchant-current.pem", "fixture/pki/merchant-rotated.pem"]]
        let test = common.merging([
            "id": SandboxCommand.testTenant, "origins": [merchant.origin], "apiKeys": [APIKeyring.setting(forKey: keys.test)],
            "testConditions": ["kinds": ["developerProfile"], "trustAnchors": ["fixture/issuer/iaca.pem"]],
        ]) { $1 }
        let production = common.merging([
            "id": SandboxCommand.productionTenant, "trustAnchors": ["production-iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: keys.production)],
        ]) { $1 }
        let config: [String: Any] = [
            "tenants": [test, production],
            "postgres": ["connectionString": postgres], "kafka": ["bootstrapServers": bootstrap], "replay": ["nonceKeyFile": "nonce.key"],
            "observability": ["port": 0],
        ]
        let json = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try write(String(decoding: json, as: UTF8.self) + "\n", "sandbox.json", 0o644)
        return directory.appendingPathComponent("sandbox.json")
    }
}

/// A line on stdout at once, also into a pipe or a file (print's stdout is
/// block-buffered there, and whoever waits on the sandbox reads its lines).
private func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
