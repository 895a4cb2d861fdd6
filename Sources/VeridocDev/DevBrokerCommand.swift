import CommandLineSupport
import Foundation
import Kafka
import KafkaMock

/// `veridoc-dev dev-broker [--brokers N] [--topic NAME:PARTITIONS]... [--parent-pid PID] [--rebalance-delay-ms MS]`
///
/// Runs librdkafka's in-process mock cluster as a stand-alone Kafka for local
/// development and for tests that drive other processes. Prints one line
/// `BOOTSTRAP=<host:port,…>` on stdout, then serves until SIGTERM/SIGINT (exit
/// 0) or until the `--parent-pid` process is gone, so a crashed harness leaves
/// no broker behind.
///
/// Optional control commands on stdin, one per line, each answered with `OK`
/// or `ERR <reason>` on stdout:
///   down <brokerId> | up <brokerId> | errors <apiKey> <code>[,<code>…] | topic <name> <partitions>
/// End of stdin only ends the command reader: the broker may run with stdin
/// from /dev/null.
enum DevBrokerCommand {
    struct Options {
        var brokers: Int32 = 3
        var topics: [(String, Int32)] = []
        var parentPID: pid_t?
        /// See `MockCluster.init`.
        var rebalanceDelayMilliseconds: Int32 = 250
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            Console.error(error.report(otherwise: Usage.text))
            return 2
        }

        // Take the signals away from their default action before anything
        // else, so a SIGTERM arriving early still ends in a clean exit 0.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "veridoc.dev-broker.signals")
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: signalQueue)
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        // A reader that went away is an EPIPE for Output.line to end on, not a signal death.
        signal(SIGPIPE, SIG_IGN)
        let cluster: MockCluster
        do {
            cluster = try MockCluster(brokers: options.brokers, initialRebalanceDelayMilliseconds: options.rebalanceDelayMilliseconds)
            for (name, partitions) in options.topics {
                try cluster.createTopic(name, partitions: partitions)
            }
        } catch {
            Console.error("dev-broker: \(error)")
            return 1
        }
        Output.line("BOOTSTRAP=\(cluster.bootstrapServers)")

        var watcher: DispatchSourceTimer?
        if let parent = options.parentPID {
            let timer = DispatchSource.makeTimerSource(queue: signalQueue)
            timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
            timer.setEventHandler {
                // kill(pid, 0) probes existence without sending anything;
                // EPERM still means "exists".
                if kill(parent, 0) != 0 && errno == ESRCH { stop.signal() }
            }
            timer.resume()
            watcher = timer
        }

        // Blocking reads get a thread of their own; the process exits from
        // the main thread regardless of where this one is blocked.
        let reader = Thread {
            while let line = readLine() {
                let command = line.trimmingCharacters(in: .whitespaces)
                guard !command.isEmpty else { continue }
                Output.line(execute(command, on: cluster))
            }
        }
        reader.name = "dev-broker-stdin"
        reader.start()

        stop.wait()
        watcher?.cancel()
        sources.forEach { $0.cancel() }
        cluster.close()
        return 0
    }

    /// One control command → `OK` or `ERR <reason>`.
    static func execute(_ command: String, on cluster: MockCluster) -> String {
        let words = command.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        do {
            switch (words.first, words.count) {
            case ("down", 2):
                guard let id = Int32(words[1]) else { return "ERR broker id must be a number" }
                try cluster.setBrokerDown(id)
            case ("up", 2):
                guard let id = Int32(words[1]) else { return "ERR broker id must be a number" }
                try cluster.setBrokerUp(id)
            case ("errors", 3):
                guard let apiKey = Int16(words[1]) else { return "ERR api key must be a number" }
                let codes = words[2].split(separator: ",").map { Int32($0) }
                guard !codes.isEmpty, !codes.contains(nil) else { return "ERR error codes must be numbers, comma-separated" }
                cluster.pushRequestErrors(apiKey: apiKey, errors: codes.compactMap { $0 })
            case ("topic", 3):
                guard let partitions = Int32(words[2]), partitions > 0 else { return "ERR partitions must be a positive number" }
                try cluster.createTopic(words[1], partitions: partitions)
            default:
                return "ERR unknown command (down ID | up ID | errors APIKEY CODE[,CODE…] | topic NAME PARTITIONS)"
            }
            return "OK"
        } catch {
            return "ERR \(error.name) \(error.message)"
        }
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var index = 0
        func value() throws(UsageError) -> String {
            guard index + 1 < arguments.count else { throw UsageError("\(arguments[index]) needs a value") }
            index += 1
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--brokers":
                guard let count = Int32(try value()), count > 0 else { throw UsageError("--brokers needs a positive number") }
                options.brokers = count
            case "--topic":
                let spec = try value()
                guard let colon = spec.lastIndex(of: ":"), let partitions = Int32(spec[spec.index(after: colon)...]), partitions > 0,
                      colon != spec.startIndex else {
                    throw UsageError("--topic needs NAME:PARTITIONS, got \(spec)")
                }
                options.topics.append((String(spec[..<colon]), partitions))
            case "--rebalance-delay-ms":
                guard let delay = Int32(try value()), delay >= 0 else { throw UsageError("--rebalance-delay-ms needs a number of milliseconds") }
                options.rebalanceDelayMilliseconds = delay
            case "--parent-pid":
                guard let pid = pid_t(try value()), pid > 0 else { throw UsageError("--parent-pid needs a process id") }
                options.parentPID = pid
            default:
                throw UsageError("dev-broker: unknown argument \(arguments[index])")
            }
            index += 1
        }
        return options
    }

    /// Whole lines straight to fd 1 (unbuffered), so a reader on a pipe sees
    /// each one at once; a lock keeps replies and the BOOTSTRAP line whole.
    /// A reader that is gone (EPIPE: the test or harness that started the
    /// broker has let go of it) ends the broker quietly; `write(_:)` would
    /// trap on it.
    enum Output {
        private static let lock = NSLock()
        static func line(_ text: String) {
            lock.withLock {
                do {
                    try FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
                } catch {
                    exit(0)
                }
            }
        }
    }
}
