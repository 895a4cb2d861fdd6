import DemoKit
import Foundation

extension BenchReport {
    /// One way of writing the persister's batches, and what it cost the server.
    public struct StoreCase: Codable, Sendable {
        public var name: String
        public var preparedStatements: Bool
        public var replaysPerBatch: Int
        /// Median over the rounds of the backend's scheduler time, per batch.
        public var serverMillisecondsPerBatch: Double
        public var wallMillisecondsPerBatch: Double
    }

    /// `insertColumns` into one table with one encoding: best of the rounds.
    public struct StoreEncoding: Codable, Sendable {
        public var table: String
        public var encoding: String
        public var serverSeconds: Double
        public var clientSeconds: Double
        public var wallSeconds: Double
    }

    /// Section 6: what the persister's statements cost PostgreSQL (`StoreBench`).
    public struct Store: Codable, Sendable {
        public var batches: Int
        public var eventsPerBatch: Int
        public var rounds: Int
        public var fillerResults: Int
        public var cases: [StoreCase]
        /// Prepared over unnamed statements, all-new batches: server CPU.
        public var preparedOverUnnamed: Double
        /// A batch with one replay over an all-new one, prepared statements: server CPU.
        public var replayOverAllNew: Double
        public var insertRows: Int
        public var insertBatch: Int
        public var insertRounds: Int
        public var encodings: [StoreEncoding]
        /// Per table: binary arrays over text array literals, server CPU.
        public var binaryOverText: [String: Double]

        init(batches: Int, eventsPerBatch: Int, rounds: Int, fillerResults: Int, cases: [StoreCase],
             insertRows: Int, insertBatch: Int, insertRounds: Int, encodings: [StoreEncoding]) {
            self.batches = batches
            self.eventsPerBatch = eventsPerBatch
            self.rounds = rounds
            self.fillerResults = fillerResults
            self.cases = cases
            self.insertRows = insertRows
            self.insertBatch = insertBatch
            self.insertRounds = insertRounds
            self.encodings = encodings
            func server(_ prepared: Bool, _ replays: Int) -> Double {
                cases.first { $0.preparedStatements == prepared && $0.replaysPerBatch == replays }?.serverMillisecondsPerBatch ?? .nan
            }
            preparedOverUnnamed = server(true, 0) / server(false, 0)
            replayOverAllNew = server(true, 1) / server(true, 0)
            var ratios: [String: Double] = [:]
            for table in Set(encodings.map(\.table)) {
                let of = { (encoding: String) in encodings.first { $0.table == table && $0.encoding == encoding }?.serverSeconds ?? .nan }
                ratios[table] = of("binary") / of("text literals")
            }
            binaryOverText = ratios
        }

        public func table() -> [String] {
            func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
            var lines = BenchReport.section("## 6. Storage: what the persister's statements cost PostgreSQL",
                                            about: "`ResultStore.write`, \(batches) batches of \(eventsPerBatch) valid events (each keeping one element's value), into tables that already hold \(fillerResults) results; the backend's scheduler time, median of \(rounds) round\(rounds == 1 ? "" : "s") after a warm-up, cases in rotating order.",
                                            table: "| batches | server CPU ms/batch | wall ms/batch |", "|---|---:|---:|")
            for run in cases { lines.append("| \(run.name) | \(f(run.serverMillisecondsPerBatch, 3)) | \(f(run.wallMillisecondsPerBatch, 3)) |") }
            lines.append("| **prepared ÷ unnamed** (server CPU) | **\(f(preparedOverUnnamed, 3))** | |")
            lines.append("| **one replay ÷ all new** (server CPU) | **\(f(replayOverAllNew, 3))** | |")
            lines.append("")
            lines.append("`insertColumns`, \(insertRows) rows in batches of \(insertBatch), best of \(insertRounds):")
            lines.append("")
            lines.append("| table | encoding | server CPU s | client CPU s | wall s |")
            lines.append("|---|---|---:|---:|---:|")
            for run in encodings {
                lines.append("| \(run.table) | \(run.encoding) | \(f(run.serverSeconds, 3)) | \(f(run.clientSeconds, 3)) | \(f(run.wallSeconds, 3)) |")
            }
            for table in binaryOverText.keys.sorted() {
                lines.append("| **\(table): binary ÷ text literals** (server CPU) | | **\(f(binaryOverText[table]!, 3))** | | |")
            }
            return lines
        }
    }
}
