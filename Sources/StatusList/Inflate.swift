import CZlib

/// Why compressed bytes did not inflate.
public enum InflateError: Error, Sendable, Equatable {
    /// Not a zlib (RFC 1950) stream: zlib's own words.
    case malformed(String)
    /// The stream ended before its end marker.
    case truncated
    /// The output would pass `limit` bytes.
    case tooLarge(limit: Int)
    /// Bytes follow the end of the zlib stream.
    case trailingBytes
    /// zlib could not get memory for its state.
    case resources(String)

    public var detail: String {
        switch self {
        case .malformed(let reason): "not a zlib stream: \(reason)"
        case .truncated: "the zlib stream is truncated"
        case .tooLarge(let limit): "inflates to more than \(limit) bytes"
        case .trailingBytes: "bytes follow the end of the zlib stream"
        case .resources(let reason): "zlib could not start: \(reason)"
        }
    }
}

/// Bounded zlib inflation for lists from strangers.
public enum Inflate {
    /// Output is taken in pieces of this size, so memory follows what the
    /// stream really holds, never what it might expand to.
    static let chunk = 64 << 10

    /// The bytes a zlib (RFC 1950) stream inflates to, refusing anything past
    /// `maxOutput`: inflation stops at the first byte beyond it, so a zlib
    /// bomb costs at most `maxOutput` bytes and the time to produce them. A
    /// preset dictionary (which no status list uses) and bytes after the
    /// stream's end are refused.
    public static func zlib(_ data: some Collection<UInt8>, maxOutput: Int) throws(InflateError) -> [UInt8] {
        precondition(maxOutput >= 0, "a bound is not negative")
        let result = data.withContiguousStorageIfAvailable { input in
            Result { () throws(InflateError) in try inflate(input, maxOutput: maxOutput) }
        } ?? Array(data).withUnsafeBufferPointer { input in
            Result { () throws(InflateError) in try inflate(input, maxOutput: maxOutput) }
        }
        return try result.get()
    }

    private static func inflate(_ input: UnsafeBufferPointer<UInt8>, maxOutput: Int) throws(InflateError) -> [UInt8] {
        var stream = z_stream()
        let started = inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw .resources(message(of: stream, code: started)) }
        defer { inflateEnd(&stream) }

        // zlib only reads through next_in; its type lacks const unless ZLIB_CONST is set.
        stream.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
        // avail_in is 32 bits wide: larger inputs are handed over in pieces.
        var notHandedOver = input.count
        var output: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: chunk)
        while true {
            if stream.avail_in == 0, notHandedOver > 0 {
                let size = min(notHandedOver, Int(UInt32.max))
                stream.avail_in = UInt32(size)
                notHandedOver -= size
            }
            // One byte more than the bound allows is enough to know it is passed.
            let allowed = maxOutput - output.count
            let room = allowed >= chunk ? chunk : allowed + 1
            let inputBefore = stream.avail_in
            let code = piece.withUnsafeMutableBufferPointer { out in
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(room)
                return CZlib.inflate(&stream, Z_NO_FLUSH)
            }
            let produced = room - Int(stream.avail_out)
            guard produced <= allowed else { throw .tooLarge(limit: maxOutput) }
            output.append(contentsOf: piece[0..<produced])
            switch code {
            case Z_STREAM_END:
                guard stream.avail_in == 0, notHandedOver == 0 else { throw .trailingBytes }
                return output
            case Z_OK, Z_BUF_ERROR:
                // No progress with nothing left to read: the stream stops short of its end.
                if produced == 0, stream.avail_in == inputBefore, stream.avail_in == 0, notHandedOver == 0 { throw .truncated }
                if produced == 0, stream.avail_in == inputBefore { throw .malformed("zlib made no progress") }
            case Z_NEED_DICT:
                throw .malformed("the stream needs a preset dictionary")
            case Z_MEM_ERROR:
                throw .resources(message(of: stream, code: code))
            default:
                throw .malformed(message(of: stream, code: code))
            }
        }
    }

    private static func message(of stream: z_stream, code: Int32) -> String {
        stream.msg.map { String(cString: $0) } ?? "zlib error \(code)"
    }
}
