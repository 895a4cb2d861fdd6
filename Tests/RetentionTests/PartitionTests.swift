import Foundation
import Testing
@testable import Storage

struct PartitionTests {
    let now = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z

    @Test func dailyNearMonthlyFarClippedToNeighbours() {
        let (lower, upper) = ValuePartitions.range(for: now.addingTimeInterval(86_400), now: now, existing: [])
        #expect(ValuePartitions.name(lower: lower, upper: upper) == "element_values_d20250616_20250617")
        let far = now.addingTimeInterval(400 * 86_400)  // 2026-07-20
        let (farLower, farUpper) = ValuePartitions.range(for: far, now: now, existing: [])
        #expect(ValuePartitions.name(lower: farLower, upper: farUpper) == "element_values_d20260701_20260801")
        // An existing daily partition inside the month clips the monthly one.
        let existing = ValuePartitions.parse("element_values_d20260701_20260710")!
        let (clippedLower, clippedUpper) = ValuePartitions.range(for: far, now: now, existing: [existing])
        #expect(ValuePartitions.name(lower: clippedLower, upper: clippedUpper) == "element_values_d20260710_20260801")
        #expect(ValuePartitions.parse("element_values_unlimited") == nil)
    }
}
