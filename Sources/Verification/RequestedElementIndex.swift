import MDoc

/// The requested elements, found by namespace and element identifier (by
/// their bytes) in constant time: the outcome, the sealed claims and the
/// retention decision look up every disclosed element, and a response of
/// thousands of elements against a request of thousands must not cost their
/// product. The first request for a name wins, as a scan from the start finds it.
public struct RequestedElementIndex: Sendable {
    /// Up to this many requests a scan beats building a dictionary (nearly every request).
    static let linearLimit = 8

    private let elements: [RequestedElement]
    private let positions: [Key: Int]?

    private struct Key: Hashable {
        let namespace: Identifier
        let element: Identifier
    }

    public init(_ elements: [RequestedElement]) {
        self.elements = elements
        if elements.count <= Self.linearLimit {
            positions = nil
        } else {
            var positions: [Key: Int] = [:]
            positions.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let key = Key(namespace: Identifier(element.namespace), element: Identifier(element.element))
                if positions[key] == nil { positions[key] = index }
            }
            self.positions = positions
        }
    }

    public subscript(namespace namespace: String, element element: String) -> RequestedElement? {
        if let positions {
            return positions[Key(namespace: Identifier(namespace), element: Identifier(element))].map { elements[$0] }
        }
        // Element first: it tells candidates apart, the namespace rarely does.
        return elements.first { $0.element.hasSameUTF8(as: element) && $0.namespace.hasSameUTF8(as: namespace) }
    }
}
