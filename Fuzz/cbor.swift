// libFuzzer target: the strict CBOR decoder on arbitrary bytes. A decoded item
// must also survive conversion to a value and re-encoding (plain and with
// sorted keys), and the plain re-encoding must decode to the same value
// (values with NaN aside, which equal nothing).
import CBOR

private let relaxed = CBORDecoder(limits: .init(maxDepth: 64, maxItems: 1 << 20, maxInputSize: 64 << 20))

enum Target: FuzzTarget {
    static let name: StaticString = "cbor"

    static func run(_ bytes: [UInt8]) {
        guard let item = try? CBORDecoder().decode(bytes) else { return }
        precondition(item.encoded.count == bytes.count, "a top-level item spans its whole input")
        let value = item.value
        let encoded = value.encoded()
        _ = value.encoded(sortingMapKeys: true)
        let again: CBORItem
        do {
            again = try relaxed.decode(encoded)
        } catch {
            preconditionFailure("the re-encoding of a decoded item does not decode: \(error)")
        }
        precondition(hasNaN(value) || again.value == value, "re-encoding changed the value")
    }
}

private func hasNaN(_ value: CBOR) -> Bool {
    switch value {
    case .float(let number): number.isNaN
    case .array(let items): items.contains(where: hasNaN)
    case .map(let entries): entries.contains { hasNaN($0.key) || hasNaN($0.value) }
    case .tagged(_, let inner): hasNaN(inner)
    default: false
    }
}
