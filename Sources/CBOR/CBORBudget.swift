/// The items and input bytes that all decodes of one event may take together.
///
/// An mdoc nests CBOR in byte strings (`#6.24`): each IssuerSignedItem, the
/// MSO, the device namespaces, COSE headers are decoded separately. Limits
/// per decode would give every nested item a fresh allowance, so a response
/// of a few megabytes could hold millions of items in total. One budget,
/// shared by every decoder and cursor reading the event, bounds what the
/// whole event may cost, whatever its nesting.
///
/// Counting happens on every item, so the counters are a plain allocation
/// rather than atomics or class properties with exclusivity checks: a
/// budget belongs to one verification, which runs on one thread, and is
/// never shared between two.
public final class CBORBudget: @unchecked Sendable {
    public let maxItems: Int
    public let maxBytes: Int
    @usableFromInline let counters: UnsafeMutablePointer<Int>

    public init(maxItems: Int, maxBytes: Int) {
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        counters = .allocate(capacity: 2)
        counters.initialize(repeating: 0, count: 2)
    }

    deinit { counters.deallocate() }

    /// Items taken so far.
    public var items: Int { counters[0] }
    /// Input bytes taken so far: every decode and cursor charges the bytes it reads.
    public var bytes: Int { counters[1] }

    /// False once the items would exceed the budget (the item is then not taken).
    @inlinable
    public func takeItem() -> Bool {
        guard counters[0] < maxItems else { return false }
        counters[0] += 1
        return true
    }

    /// False once the bytes would exceed the budget (nothing is then taken).
    @inlinable
    public func takeBytes(_ count: Int) -> Bool {
        guard count <= maxBytes - counters[1] else { return false }
        counters[1] += count
        return true
    }
}
