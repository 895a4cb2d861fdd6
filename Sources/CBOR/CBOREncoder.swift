/// Preferred serialization (RFC 8949 §4.1): shortest heads, definite lengths,
/// floats in the shortest width that keeps their value. Map entries keep the
/// order they were given in, unless `sortingMapKeys` asks for the core
/// deterministic order (§4.2.1, bytewise order of the encoded keys).
extension CBOR {
    public func encoded(sortingMapKeys: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out, sortingMapKeys: sortingMapKeys)
        return out
    }

    public func encode(into out: inout [UInt8], sortingMapKeys: Bool = false) {
        switch self {
        case .unsigned(let value):
            writeHead(major: 0, value, into: &out)
        case .negative(let value):
            writeHead(major: 1, value, into: &out)
        case .bytes(let value):
            writeHead(major: 2, UInt64(value.count), into: &out)
            out.append(contentsOf: value)
        case .text(let value):
            let utf8 = value.utf8
            writeHead(major: 3, UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
        case .array(let items):
            writeHead(major: 4, UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out, sortingMapKeys: sortingMapKeys) }
        case .map(let entries):
            writeHead(major: 5, UInt64(entries.count), into: &out)
            if sortingMapKeys {
                let encodedEntries = entries.map {
                    (key: $0.key.encoded(sortingMapKeys: true), value: $0.value)
                }
                for entry in encodedEntries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    out.append(contentsOf: entry.key)
                    entry.value.encode(into: &out, sortingMapKeys: true)
                }
            } else {
                for entry in entries {
                    entry.key.encode(into: &out)
                    entry.value.encode(into: &out)
                }
            }
        case .tagged(let tag, let item):
            writeHead(major: 6, tag, into: &out)
            item.encode(into: &out, sortingMapKeys: sortingMapKeys)
        case .simple(let value):
            if value < 24 {
                out.append(0xe0 | value)
            } else {
                out.append(contentsOf: [0xf8, value])
            }
        case .bool(let value):
            out.append(value ? 0xf5 : 0xf4)
        case .null:
            out.append(0xf6)
        case .undefined:
            out.append(0xf7)
        case .float(let value):
            writeFloat(value, into: &out)
        case .preEncoded(let bytes):
            out.append(contentsOf: bytes)
        }
    }
}

extension CBOR {
    /// Appends the preferred head of an item of major type `major`: for
    /// writing a structure around received bytes without first copying them
    /// into `CBOR` values (signature inputs embed kilobytes of them).
    public static func appendHead(major: UInt8, _ argument: UInt64, to out: inout [UInt8]) {
        writeHead(major: major, argument, into: &out)
    }
}

private func writeHead(major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
    let high = major << 5
    switch argument {
    case 0..<24:
        out.append(high | UInt8(argument))
    case 24...0xff:
        out.append(contentsOf: [high | 24, UInt8(argument)])
    case 0x100...0xffff:
        out.append(high | 25)
        appendBigEndian(argument, width: 2, into: &out)
    case 0x1_0000...0xffff_ffff:
        out.append(high | 26)
        appendBigEndian(argument, width: 4, into: &out)
    default:
        out.append(high | 27)
        appendBigEndian(argument, width: 8, into: &out)
    }
}

private func appendBigEndian(_ value: UInt64, width: Int, into out: inout [UInt8]) {
    for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
        out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
}

private func writeFloat(_ value: Double, into out: inout [UInt8]) {
    if value.isNaN {
        out.append(contentsOf: [0xf9, 0x7e, 0x00])
        return
    }
    let single = Float(value)
    if Double(single) == value {
        if let half = exactHalf(single) {
            out.append(0xf9)
            appendBigEndian(UInt64(half), width: 2, into: &out)
        } else {
            out.append(0xfa)
            appendBigEndian(UInt64(single.bitPattern), width: 4, into: &out)
        }
    } else {
        out.append(0xfb)
        appendBigEndian(value.bitPattern, width: 8, into: &out)
    }
}

/// The binary16 pattern of `value` when it converts without loss.
private func exactHalf(_ value: Float) -> UInt16? {
    let bits = value.bitPattern
    let sign = UInt16((bits >> 16) & 0x8000)
    if value.isInfinite { return sign | 0x7c00 }
    if value == 0 { return sign }
    let exponent = Int((bits >> 23) & 0xff) - 127
    let mantissa = bits & 0x7f_ffff
    if exponent >= -14 && exponent <= 15 {
        guard mantissa & 0x1fff == 0 else { return nil }
        return sign | UInt16(exponent + 15) << 10 | UInt16(mantissa >> 13)
    }
    if exponent >= -24 && exponent < -14 {
        // Subnormal half: the full significand shifted right must lose nothing.
        let significand = mantissa | 0x80_0000
        let shift = UInt32(-exponent - 14 + 13)
        guard significand & ((1 << shift) - 1) == 0 else { return nil }
        return sign | UInt16(significand >> shift)
    }
    return nil
}
