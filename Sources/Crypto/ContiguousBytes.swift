/// Hands a byte collection to C as one pointer and length.
///
/// `[UInt8]`, `ArraySlice<UInt8>` and other contiguous collections are passed
/// without copying; anything else is copied once into an array. The pointer is
/// never nil, even for an empty input, because several OpenSSL entry points
/// reject a NULL buffer regardless of its length.
func withContiguousBytes<R>(_ data: some Collection<UInt8>, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    if let result = data.withContiguousStorageIfAvailable({ nonNilBase($0, body) }) {
        return result
    }
    return Array(data).withUnsafeBufferPointer { nonNilBase($0, body) }
}

private func nonNilBase<R>(_ buffer: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    if let base = buffer.baseAddress { return body(base, buffer.count) }
    var placeholder: UInt8 = 0
    return withUnsafePointer(to: &placeholder) { body($0, 0) }
}
