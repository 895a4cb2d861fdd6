/// A FIFO of optional slots that lets go of an element the moment it is
/// popped. The queues between the worker's threads hold records' payloads and
/// verification results; an array with a moving head would keep popped
/// elements alive until hundreds had piled up and then release them all at
/// once, inside the lock every producer waits on. The same holds for the
/// HTTP daemon's queued handlers (each holds its request). Not thread-safe:
/// its owner locks.
public struct RingBuffer<Element>: Sequence {
    private var slots: [Element?] = []
    private var head = 0
    public private(set) var count = 0

    public init() {}

    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ element: Element) {
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = element
        count += 1
    }

    public mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = slots[head]
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return element
    }

    /// Doubles the slots, unrolled from `head`.
    private mutating func grow() {
        var grown = [Element?](repeating: nil, count: Swift.max(16, slots.count * 2))
        for index in 0..<count { grown[index] = slots[(head + index) % slots.count] }
        slots = grown
        head = 0
    }

    public func makeIterator() -> AnyIterator<Element> {
        var offset = 0
        return AnyIterator {
            guard offset < count else { return nil }
            defer { offset += 1 }
            return slots[(head + offset) % slots.count]
        }
    }
}
