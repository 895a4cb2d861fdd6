import Foundation
import Kafka
import Testing
import TestSupport

/// Drives the built `veridoc-dev dev-broker` binary as a separate process, as a
/// test harness for the worker would.
@Suite struct DevBrokerProcessTests {

    /// Reads stdout lines from the child on a thread of its own, so every
    /// wait for a line can be bounded.
    final class LineReader: @unchecked Sendable {
        private let lines = Locked<[String]>([])
        private let arrived = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            let thread = Thread { [lines, arrived] in
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...newline)
                        lines.withValue { $0.append(line) }
                        arrived.signal()
                    }
                }
            }
            thread.start()
        }

        func next(timeout: TimeInterval) -> String? {
            guard arrived.wait(timeout: .now() + timeout) == .success else { return nil }
            return lines.withValue { $0.removeFirst() }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func devBrokerServesClientsTakesCommandsAndExitsOnSIGTERM() throws {
        let binary = Binaries.veridocDev
        #expect(FileManager.default.isExecutableFile(atPath: binary.path), "no built veridoc-dev in \(Binaries.folder.path)")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["dev-broker", "--brokers", "3", "--topic", "cli:3", "--parent-pid", "\(getpid())"]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        var terminated = false
        defer {
            if !terminated { process.terminate() }  // never leave a broker behind
        }
        let lines = LineReader(output.fileHandleForReading)

        let first = try #require(lines.next(timeout: 10), "no BOOTSTRAP line")
        #expect(first.hasPrefix("BOOTSTRAP=127.0.0.1:"))
        let bootstrap = String(first.dropFirst("BOOTSTRAP=".count))
        #expect(bootstrap.split(separator: ",").count == 3)

        // Produce and consume through the child's brokers.
        let log = DeliveryLog()
        let producer = try KafkaProducer(properties: ["bootstrap.servers": bootstrap], onDelivery: log.callback)
        for index in 0..<30 {
            try producer.send(topic: "cli", key: bytes("key-\(index)"), value: bytes("value-\(index)"), token: UInt64(index))
        }
        try producer.flush(timeoutMilliseconds: 15_000)
        #expect(log.reports.snapshot.count == 30 && log.reports.snapshot.allSatisfy { $0.error == nil })

        let consumer = try KafkaConsumer(
            properties: ["bootstrap.servers": bootstrap, "group.id": "cli", "session.timeout.ms": "6000", "fetch.wait.max.ms": "5"],
            listener: RecordingListener())
        try consumer.subscribe(["cli"])
        let messages = try consume(consumer, count: 30, timeout: 20)
        #expect(Set(messages.compactMap { text($0.value) }) == Set((0..<30).map { "value-\($0)" }))
        #expect(Set(messages.map(\.topicPartition.partition)) == [0, 1, 2])
        consumer.close()

        // Fault commands on stdin.
        func command(_ line: String) -> String? {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            return lines.next(timeout: 10)
        }
        #expect(command("down 1") == "OK")
        #expect(command("up 1") == "OK")
        #expect(command("topic extra 2") == "OK")
        #expect(command("errors 0 7,7") == "OK")
        #expect(command("sideways 1")?.hasPrefix("ERR ") == true)

        // The broker still delivers after the down/up (and the two injected
        // Produce errors are retried away).
        for index in 30..<40 {
            try producer.send(topic: "cli", key: nil, value: bytes("value-\(index)"), token: UInt64(index))
        }
        try producer.flush(timeoutMilliseconds: 20_000)
        #expect(log.reports.snapshot.count == 40 && log.reports.snapshot.allSatisfy { $0.error == nil })
        producer.close()

        // End of stdin is not a reason to exit; SIGTERM is, with status 0.
        try input.fileHandleForWriting.close()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(process.isRunning)
        process.terminate()
        let exited = DispatchSemaphore(value: 0)
        let waiter = Thread { process.waitUntilExit(); exited.signal() }
        waiter.start()
        try #require(exited.wait(timeout: .now() + 10) == .success, "dev-broker did not exit after SIGTERM")
        terminated = true
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    /// Found in `make test`: a broker whose reader had gone trapped on the
    /// EPIPE of its BOOTSTRAP line and left a core dump. It ends quietly.
    @Test func aBrokerWhoseReaderIsGoneEndsWithExitZero() throws {
        let process = Process()
        process.executableURL = Binaries.veridocDev
        process.arguments = ["dev-broker", "--brokers", "1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try output.fileHandleForReading.close()
        try process.run()
        try output.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "reason \(process.terminationReason.rawValue), status \(process.terminationStatus)")
    }
}
