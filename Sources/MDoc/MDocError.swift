import CBOR

/// Why a structure is not what ISO 18013-5 / RFC 9052 require. The text names
/// the structure and the field, never a value.
public enum MDocError: Error, Equatable, Sendable {
    /// Not the structure the standard defines (missing field, wrong type, bad CBOR).
    case malformed(String)
    /// Well-formed, but an algorithm, curve, mode or version Veridoc does not accept.
    case unsupported(String)

    public var detail: String {
        switch self {
        case .malformed(let text), .unsupported(let text): text
        }
    }

    init(_ error: CBORError) {
        self = .malformed(describe(error))
    }
}

/// A description of a CBOR failure for reason details: positions and limits only.
public func describe(_ error: CBORError) -> String {
    switch error {
    case .truncated(let offset): "CBOR truncated at byte \(offset)"
    case .lengthExceedsInput(let offset): "CBOR length prefix at byte \(offset) exceeds the input"
    case .notWellFormed(let offset, let reason): "CBOR not well-formed at byte \(offset): \(reason)"
    case .invalidUTF8(let offset): "CBOR text string at byte \(offset) is not UTF-8"
    case .duplicateMapKey(let offset): "CBOR map has a duplicate key at byte \(offset)"
    case .containerMapKey(let offset): "CBOR map key at byte \(offset) is an array, map or tag"
    case .trailingBytes(let offset): "CBOR has trailing bytes after byte \(offset)"
    case .depthLimitExceeded(let limit): "CBOR nesting deeper than \(limit)"
    case .itemLimitExceeded(let limit): "CBOR has more than \(limit) items"
    case .budgetExceeded(let items, let bytes): "the event's CBOR, nested structures included, has more than \(items) items or \(bytes) bytes to read"
    case .inputTooLarge(let size, let limit): "CBOR input of \(size) bytes exceeds \(limit)"
    case .unexpectedType(let expected, let context): "\(context): expected \(expected)"
    case .missingKey(let key, let context): "\(context): missing \(key)"
    }
}

/// Runs a CBOR read and turns its error into `MDocError.malformed`.
@inline(__always)
func structure<T>(_ body: () throws(CBORError) -> T) throws(MDocError) -> T {
    do {
        return try body()
    } catch {
        throw MDocError(error)
    }
}

extension MDocError {
    public var isUnsupported: Bool {
        if case .unsupported = self { return true }
        return false
    }
}
