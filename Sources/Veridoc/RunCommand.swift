import CommandLineSupport
import CMalloc
import Dispatch
import Foundation
import Observability
import Pipeline
import Postgres
import Settings
import Storage
import Verification

/// `veridoc run --config FILE`: the worker. `veridoc migrate --config FILE`:
/// apply the schema migrations alone.
enum RunCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            // Trapped first: a SIGTERM while the config, the keys and the
            // tenants load, or while PostgreSQL is awaited, must end in a clean
            // exit 0 too, not the default signal death.
            let stop = StopFlag()
            let started = Started()
            let signals = SignalTrap {
                stop.set()
                started.worker?.requestStop()
            }
            let (configuration, directory) = try load(arguments)
            guard !stop.isSet else { return }
            let log = Logger(minimum: configuration.logLevel)
            log.routeLibraryLogs()
            tuneMalloc()
            let worker = try Worker(configuration: configuration, directory: directory, log: log)
            started.worker = worker
            // Up before migrating: /healthz answers at once, /readyz says why not yet.
            let health = worker.metrics.health
            ProcessMetrics.register(in: worker.metrics.registry, version: Version.veridoc)
            let server = try HTTPServer(port: configuration.httpPort, limits: ProbeLimits.of(configuration.observability),
                                        registry: worker.metrics.registry) { health.readiness() }
            log.info("observability listening", ["port": "\(server.port)"])
            try migrate(configuration, log: log, stop: stop)
            if !stop.isSet { try worker.run() }
            server.stop()
            withExtendedLifetime(signals) {}
        }
    }

    static func migrateOnly(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let (configuration, _) = try load(arguments)
            let log = Logger(minimum: configuration.logLevel)
            log.routeLibraryLogs()
            try migrate(configuration, log: log)
        }
    }

    private static func load(_ arguments: [String]) throws -> (WorkerConfiguration, TenantDirectory) {
        let deployment = try ConfigFile.read(ParsedArguments(arguments, options: ["--config"], flags: []))
        return (try WorkerConfiguration.load(deployment), deployment.tenants)
    }

    /// Applies migrations, waiting for PostgreSQL to come up (bounded).
    private static func migrate(_ configuration: WorkerConfiguration, log: Logger, stop: StopFlag = StopFlag()) throws {
        let deadline = Date().addingTimeInterval(60)
        while !stop.isSet {
            do {
                let connection = try configuration.connectPostgres(applicationName: "veridoc-migrate")
                defer { connection.close() }
                let applied = try Migrations.apply(on: connection)
                if !applied.isEmpty { log.info("migrations applied", ["versions": applied.map(String.init).joined(separator: ",")]) }
                return
            } catch let error as PostgresError where error.isTransient && Date() < deadline {
                log.warning("postgres not reachable yet; retrying", ["code": error.sqlState ?? "connection"])
                for _ in 0..<10 where !stop.isSet { Thread.sleep(forTimeInterval: 0.1) }
            }
        }
        log.info("stopped before the migrations could run")
    }
}

/// The worker once it exists, for a signal that may come before.
final class Started: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Worker?
    var worker: Worker? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// Turns SIGTERM and SIGINT into a call, on a dispatch queue rather than in a
/// signal handler, so the handler may take locks.
///
/// Unchecked Sendable: `sources` is written once in init and only kept alive
/// afterwards; dispatch sources are safe to hold from any thread.
final class SignalTrap: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}

/// glibc gives each thread that allocates its own malloc arena (up to 8 per
/// core), and each arena keeps the memory freed in it; the worker's verify,
/// persist, outbox and librdkafka threads would each hold freed memory of
/// their own. Two arenas keep contention low for a pool sized to the cores.
///
/// Blocks from 256 KB up are mapped on their own and go back to the system
/// when freed. Left to glibc, that threshold rises to the largest block freed
/// so far (up to 32 MB): after the first of librdkafka's fetch responses (a
/// few MB each) the next ones would come from the heap and leave holes there
/// that small allocations pin, keeping tens of MB of freed heap resident
/// while a backlog drains.
///
/// `MALLOC_ARENA_MAX` and `MALLOC_MMAP_THRESHOLD_` in the environment still win.
private func tuneMalloc() {
    let environment = ProcessInfo.processInfo.environment
    if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, 2) }
    if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(M_MMAP_THRESHOLD, 256 * 1024) }
}
