/// Writes compact JSON (no whitespace).
///
/// Escapes only what JSON requires: `"`, `\` and the control characters below
/// U+0020 (as `\b \f \n \r \t`, otherwise `\u00xx`). `/` is not escaped and
/// non-ASCII text is written as UTF-8. Integers are written as integers, other
/// numbers in the shortest form that reads back to the same `Double`.
public struct JSONWriter: Sendable {
    public enum KeyOrder: Sendable {
        /// By the keys' UTF-8 bytes, so equal values give equal bytes.
        /// (Foundation's `.sortedKeys` compares case-insensitively and
        /// numerically instead; for keys of lowercase letters followed by
        /// camel-case words — every key Veridoc writes — the orders agree.)
        case sorted
        /// As the members were parsed or added.
        case insertion
    }

    public var keyOrder: KeyOrder

    public init(keyOrder: KeyOrder = .sorted) {
        self.keyOrder = keyOrder
    }

    public func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, to: &output)
        return output
    }

    public func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(true): output.append(contentsOf: "true".utf8)
        case .bool(false): output.append(contentsOf: "false".utf8)
        case .number(let number): output.append(contentsOf: number.description.utf8)
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            let members = keyOrder == .sorted
                ? object.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                : object.members
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Copies runs that need no escaping in one go.
    static func writeString(_ text: String, to output: inout [UInt8]) {
        var text = text
        output.append(UInt8(ascii: "\""))
        text.withUTF8 { bytes in
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    output.append(contentsOf: "u00".utf8)
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                }
                runStart = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// Compact JSON text; keys sorted by their UTF-8 bytes unless `keyOrder` says otherwise.
    public func jsonBytes(keyOrder: JSONWriter.KeyOrder = .sorted) -> [UInt8] {
        JSONWriter(keyOrder: keyOrder).bytes(self)
    }

    public func jsonString(keyOrder: JSONWriter.KeyOrder = .sorted) -> String {
        JSONWriter(keyOrder: keyOrder).string(self)
    }
}
