import Foundation

/// The process's metrics, rendered in the Prometheus text exposition format
/// 0.0.4: `# HELP` and `# TYPE` lines, then one line per series, metrics in
/// name order and series in label-value order, so equal states render equal
/// text.
///
/// Metrics are registered once (a name registered twice is a programmer
/// error) and kept for the life of the registry. Updating a metric takes only
/// that metric's lock; rendering takes each lock briefly in turn.
///
/// Label names are fixed at registration. Label values must come from closed
/// sets (verdicts, reason codes, configured topics and partition numbers):
/// never event ids, tenant-supplied text or anything personal — each distinct
/// value is a new series kept until the process ends.
///
/// Unchecked Sendable: `metrics` is guarded by `lock`; the metrics guard themselves.
public final class MetricsRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var metrics: [String: any Metric] = [:]

    public init() {}

    /// A counter: a value that only goes up (`…_total` by convention).
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        register(Counter(name: name, help: help, labelNames: labels))
    }

    /// A gauge: a value that is set, or sampled at scrape time (`Gauge.sample`).
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        register(Gauge(name: name, help: help, labelNames: labels))
    }

    /// A counter whose value is read by `sampler` at scrape time, for totals
    /// another party keeps (the kernel's CPU time).
    public func sampledCounter(_ name: String, help: String, _ sampler: @escaping @Sendable () -> Double) {
        _ = register(SampledCounter(name: name, help: help, sampler: sampler))
    }

    /// A histogram with fixed upper bounds (ascending; `+Inf` is implied).
    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> Histogram {
        register(Histogram(name: name, help: help, labelNames: labels, buckets: buckets))
    }

    private func register<M: Metric>(_ metric: M) -> M {
        precondition(Exposition.isValidMetricName(metric.name), "invalid metric name \(metric.name)")
        for label in metric.labelNames {
            precondition(Exposition.isValidLabelName(label) && !(metric is Histogram && label == "le"), "invalid label name \(label) for \(metric.name)")
        }
        lock.lock()
        defer { lock.unlock() }
        precondition(metrics[metric.name] == nil, "metric \(metric.name) registered twice")
        metrics[metric.name] = metric
        return metric
    }

    /// The exposition text (content type `text/plain; version=0.0.4`).
    public func exposition() -> String {
        lock.lock()
        let sorted = metrics.sorted { $0.key < $1.key }.map(\.value)
        lock.unlock()
        var out = ""
        out.reserveCapacity(sorted.count * 256)
        for metric in sorted {
            out += "# HELP \(metric.name) \(Exposition.escapeHelp(metric.help))\n"
            out += "# TYPE \(metric.name) \(metric.typeName)\n"
            metric.render(into: &out)
        }
        return out
    }

    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}

protocol Metric: AnyObject, Sendable {
    var name: String { get }
    var help: String { get }
    var labelNames: [String] { get }
    var typeName: String { get }
    func render(into out: inout String)
}

/// A monotonically increasing value per label combination.
public final class Counter: Metric, Sendable {
    let help: String
    var typeName: String { "counter" }
    private let series: LabelledValues
    var name: String { series.name }
    var labelNames: [String] { series.labelNames }

    init(name: String, help: String, labelNames: [String]) {
        self.help = help
        series = LabelledValues(name: name, labelNames: labelNames)
    }

    /// Adds `amount` (≥ 0) to the series named by `labels` (one value per label name, in order).
    public func increment(by amount: Double = 1, _ labels: String...) {
        add(amount, labels: labels)
    }

    public func add(_ amount: Double, labels: [String]) {
        guard amount >= 0 else { return }
        series.update(labels) { $0 = ($0 ?? 0) + amount }
    }

    /// Makes a series exist (at 0) before its first increment, so rate() sees its start.
    public func initialize(_ labels: String...) {
        series.update(labels) { $0 = $0 ?? 0 }
    }

    public func value(_ labels: String...) -> Double {
        series.value(labels) ?? 0
    }

    func render(into out: inout String) {
        Exposition.render(name, labelNames, series.snapshot, into: &out)
    }
}

/// An unlabelled counter read at scrape time.
final class SampledCounter: Metric, Sendable {
    let name: String
    let help: String
    let sampler: @Sendable () -> Double
    var typeName: String { "counter" }
    var labelNames: [String] { [] }

    init(name: String, help: String, sampler: @escaping @Sendable () -> Double) {
        self.name = name
        self.help = help
        self.sampler = sampler
    }

    func render(into out: inout String) {
        Exposition.render(name, [], [[]: sampler()], into: &out)
    }
}

/// A value that goes up and down per label combination; or, unlabelled, a
/// value sampled by a closure at scrape time (cheap reads of state another
/// component owns: queue depths, assignment sizes).
///
/// Unchecked Sendable: `sampler` is guarded by `lock`.
public final class Gauge: Metric, @unchecked Sendable {
    let help: String
    var typeName: String { "gauge" }
    private let series: LabelledValues
    var name: String { series.name }
    var labelNames: [String] { series.labelNames }
    private let lock = NSLock()
    private var sampler: (@Sendable () -> Double)?

    init(name: String, help: String, labelNames: [String]) {
        self.help = help
        series = LabelledValues(name: name, labelNames: labelNames)
    }

    public func set(_ value: Double, _ labels: String...) {
        series.update(labels) { $0 = value }
    }

    public func add(_ delta: Double, _ labels: String...) {
        series.update(labels) { $0 = ($0 ?? 0) + delta }
    }

    /// Removes one series (for example a partition no longer owned).
    public func remove(_ labels: String...) {
        series.update(labels) { $0 = nil }
    }

    /// Replaces every series at once (for example per-partition lag after a
    /// rebalance: series of partitions no longer owned disappear).
    public func replaceAll(_ series: [[String]: Double]) {
        self.series.replaceAll(series)
    }

    /// From now on the (unlabelled) value is `sampler()` at each scrape. The
    /// closure runs on the HTTP server's thread: keep it cheap and non-blocking.
    public func sample(_ sampler: @escaping @Sendable () -> Double) {
        precondition(labelNames.isEmpty, "\(name): only an unlabelled gauge can be sampled")
        lock.withLock { self.sampler = sampler }
    }

    public func value(_ labels: String...) -> Double? {
        // Sampled outside the lock: the closure may take other locks.
        if labels.isEmpty, let sampler = lock.withLock({ self.sampler }) { return sampler() }
        return series.value(labels)
    }

    func render(into out: inout String) {
        // Sampled outside the lock: the closure may take other locks.
        let sampled: [[String]: Double]? = lock.withLock { self.sampler }.map { sampler in [[]: sampler()] }
        Exposition.render(name, labelNames, sampled ?? series.snapshot, into: &out)
    }
}

/// Observations counted into fixed buckets, with their sum and count.
///
/// Unchecked Sendable: `series` is guarded by `lock`.
public final class Histogram: Metric, @unchecked Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    var typeName: String { "histogram" }
    /// Upper bounds, ascending, without `+Inf`.
    public let buckets: [Double]
    private let lock = NSLock()
    private var series: [[String]: State] = [:]

    private struct State {
        /// Per bucket (not cumulative), plus one for `+Inf`.
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    /// Seconds, 0.5 ms … 10 s: verification, batch commits, round trips.
    public static let secondsBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        let bounds = buckets.filter { $0.isFinite }
        precondition(!bounds.isEmpty && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "\(name): buckets must ascend")
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = bounds
        if labelNames.isEmpty { series[[]] = State(counts: Array(repeating: 0, count: bounds.count + 1)) }
    }

    public func observe(_ value: Double, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name): \(labelNames.count) label values expected")
        guard !value.isNaN else { return }
        // Bucket bounds are inclusive upper limits (le).
        var index = 0
        while index < buckets.count && value > buckets[index] { index += 1 }
        lock.lock()
        var state = series[labels] ?? State(counts: Array(repeating: 0, count: buckets.count + 1))
        state.counts[index] += 1
        state.sum += value
        state.count += 1
        series[labels] = state
        lock.unlock()
    }

    /// (count, sum) of a series.
    public func summary(_ labels: String...) -> (count: UInt64, sum: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard let state = series[labels] else { return (0, 0) }
        return (state.count, state.sum)
    }

    func render(into out: inout String) {
        lock.lock()
        let snapshot = series
        lock.unlock()
        for (labels, state) in snapshot.sorted(by: { Exposition.less($0.key, $1.key) }) {
            var cumulative: UInt64 = 0
            for (index, bound) in buckets.enumerated() {
                cumulative += state.counts[index]
                out += name + "_bucket" + Exposition.labels(labelNames + ["le"], labels + [Exposition.format(bound)]) + " \(cumulative)\n"
            }
            cumulative += state.counts[buckets.count]
            out += name + "_bucket" + Exposition.labels(labelNames + ["le"], labels + ["+Inf"]) + " \(cumulative)\n"
            out += name + "_sum" + Exposition.labels(labelNames, labels) + " " + Exposition.format(state.sum) + "\n"
            out += name + "_count" + Exposition.labels(labelNames, labels) + " \(state.count)\n"
        }
    }
}

/// Formatting rules of the text format.
enum Exposition {
    /// A line per series of a counter or gauge, in label order.
    static func render(_ name: String, _ labelNames: [String], _ series: [[String]: Double], into out: inout String) {
        for (values, value) in series.sorted(by: { less($0.key, $1.key) }) {
            out += name + labels(labelNames, values) + " " + format(value) + "\n"
        }
    }

    static func isValidMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" || first == ":" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == ":" }
    }

    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_", !name.hasPrefix("__") else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }

    /// `{a="x",b="y"}`, or nothing without labels. Values escape `\`, `"` and newline.
    static func labels(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        var out = "{"
        for (index, name) in names.enumerated() {
            if index > 0 { out += "," }
            out += name + "=\"" + escapeLabelValue(values[index]) + "\""
        }
        return out + "}"
    }

    static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Integers without a fraction, `+Inf`/`-Inf`/`NaN`, otherwise the shortest round-tripping form.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func less(_ lhs: [String], _ rhs: [String]) -> Bool {
        for (left, right) in zip(lhs, rhs) where left != right {
            // Numeric label values (partitions) sort as numbers.
            if let l = Int(left), let r = Int(right) { return l < r }
            return left < right
        }
        return lhs.count < rhs.count
    }
}

private extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
