/// A name from a document or an event — docType, namespace, element
/// identifier, tenant id — that is equal to another exactly when its UTF-8
/// bytes are. Swift's `String` equality is Unicode-canonical: "K" and U+212A
/// KELVIN SIGN compare equal, so an MSO that signs one spelling would vouch
/// for a document that claims the other, and a tenant id could alias
/// another's nonces. Identifiers are compared, hashed and reported as the
/// bytes that were signed or sent.
public struct Identifier: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public init(_ text: String) {
        self.text = text
    }

    public var description: String { text }

    public static func == (lhs: Identifier, rhs: Identifier) -> Bool {
        lhs.text.hasSameUTF8(as: rhs.text)
    }

    public func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension String {
    /// Whether the two strings are the same UTF-8 bytes (no Unicode equivalence).
    public func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var lhs = self
        var rhs = other
        return lhs.withUTF8 { left in rhs.withUTF8 { right in left.elementsEqual(right) } }
    }
}
