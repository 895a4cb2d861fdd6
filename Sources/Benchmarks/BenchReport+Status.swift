import Foundation

extension BenchReport {
    /// Section 8: revocation checking (`StatusBench`).
    public struct Status: Codable, Sendable {
        public var events: Int
        public var rounds: Int
        /// CPU with a cached list ÷ without a reference: the median of the interleaved chunks' ratios.
        public var warmCacheRatio: Double
        /// One thread's CPU per event, verification and status resolution: the median over the chunks.
        public var cpuMicrosecondsPerEventWithout: Double
        public var cpuMicrosecondsPerEventWith: Double
        public var verifiedWithReference: Int
        /// The same ratio for events whose document signer and IACA name CRLs (both cached), against events whose certificates, made the same way, name none.
        public var warmCRLRatio: Double
        public var cpuMicrosecondsPerEventWithCRLs: Double
        public var verifiedWithCRLs: Int
        public var coldListEntries: Int
        public var coldListMilliseconds: Double
        public var coldListRSSGrowthMegabytes: Double
        public var coldListVerdict: String
        public var waitingQueries: Int
        public var fetchesForWaitingQueries: Int
        public var retainedReferences: Int
        public var recheckMicrosecondsPerReference: Double

        public var targets: [BenchReport.Target] {
            [BenchReport.Target("status check with a cached list: CPU per event ÷ without a reference", warmCacheRatio, "×", atMost: 1.05),
             BenchReport.Target("status check with two cached CRLs: CPU per event ÷ certificates naming none", warmCRLRatio, "×", atMost: 1.05),
             BenchReport.Target("fetches for \(waitingQueries) queries naming one cold list", Double(fetchesForWaitingQueries), "", atMost: 1),
             BenchReport.Target("RSS growth reading a cold \(coldListEntries)-entry 8-bit list", coldListRSSGrowthMegabytes, "MB", atMost: 16)]
        }

        public func table() -> [String] {
            func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
            var lines = BenchReport.section("## 8. Revocation (status lists and CRLs)",
                                            about: "Lists served over HTTP on loopback by this process. One thread; CPU per event = verification and status resolution of \(events) iso-device-response events with and \(events) without a reference, in interleaved chunks of 100 over \(rounds) rounds; the ratio is the median of the chunks' ratios.",
                                            table: "| measure | value |", "|---|---:|")
            lines.append("| CPU per event, no status reference | \(f(cpuMicrosecondsPerEventWithout, 1)) µs |")
            lines.append("| CPU per event, status list cached | \(f(cpuMicrosecondsPerEventWith, 1)) µs (\(f(warmCacheRatio, 3))×; \(verifiedWithReference) of \(events) verified) |")
            lines.append("| CPU per event, document signer's and IACA's CRLs cached | \(f(cpuMicrosecondsPerEventWithCRLs, 1)) µs (\(f(warmCRLRatio, 3))×; \(verifiedWithCRLs) of \(events) verified) |")
            lines.append("| cold \(coldListEntries)-entry 8-bit list: fetch, inflate, index, answer | \(f(coldListMilliseconds, 1)) ms, RSS +\(f(coldListRSSGrowthMegabytes, 1)) MB (\(coldListVerdict)) |")
            lines.append("| \(waitingQueries) queries waiting on one cold list | \(fetchesForWaitingQueries) fetch(es) |")
            lines.append("| re-reading a retained reference from a cached list | \(f(recheckMicrosecondsPerReference, 2)) µs CPU each |")
            return lines
        }
    }
}
