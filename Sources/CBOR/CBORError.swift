/// Why bytes are not an acceptable CBOR data item. Cases carry positions and
/// limits, never the bytes themselves, so they are safe to log.
public enum CBORError: Error, Equatable, Sendable {
    /// The input ended inside an item.
    case truncated(offset: Int)
    /// A length prefix claims more bytes or items than the remaining input could hold.
    case lengthExceedsInput(offset: Int)
    /// Additional information 28–30, a two-byte simple value below 32, or a
    /// break where none may stand: not well-formed.
    case notWellFormed(offset: Int, reason: String)
    case invalidUTF8(offset: Int)
    case duplicateMapKey(offset: Int)
    /// A map key that is an array, a map or a tag (see `CBORDecoder`).
    case containerMapKey(offset: Int)
    /// Bytes follow the single top-level item.
    case trailingBytes(offset: Int)
    case depthLimitExceeded(limit: Int)
    case itemLimitExceeded(limit: Int)
    /// The decodes of one event together took more items or bytes than its `CBORBudget`.
    case budgetExceeded(items: Int, bytes: Int)
    case inputTooLarge(size: Int, limit: Int)
    /// Well-formed CBOR of the wrong shape for what was expected (a typed read failed).
    case unexpectedType(expected: String, context: String)
    /// A required map key is missing.
    case missingKey(String, context: String)
}
