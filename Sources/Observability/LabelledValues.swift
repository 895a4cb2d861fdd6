import Foundation

/// The series of a counter or a gauge: one value per combination of label
/// values, behind one lock. An unlabelled metric's one series exists from the
/// start: it reads 0, not "absent".
///
/// Unchecked Sendable: `values` is guarded by `lock`.
final class LabelledValues: @unchecked Sendable {
    let name: String
    let labelNames: [String]
    private let lock = NSLock()
    private var values: [[String]: Double] = [:]

    init(name: String, labelNames: [String]) {
        self.name = name
        self.labelNames = labelNames
        if labelNames.isEmpty { values[[]] = 0 }
    }

    /// Changes the series `labels` names (one value per label name, in
    /// order); nil is a series that does not exist.
    func update(_ labels: [String], _ change: (inout Double?) -> Void) {
        precondition(labels.count == labelNames.count, "\(name): \(labelNames.count) label values expected")
        lock.withLock { change(&values[labels]) }
    }

    func replaceAll(_ series: [[String]: Double]) {
        precondition(series.keys.allSatisfy { $0.count == labelNames.count }, "\(name): \(labelNames.count) label values expected")
        lock.withLock { values = series }
    }

    func value(_ labels: [String]) -> Double? {
        lock.withLock { values[labels] }
    }

    var snapshot: [[String]: Double] {
        lock.withLock { values }
    }
}
