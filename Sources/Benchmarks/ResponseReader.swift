/// One HTTP/1.1 response read as its bytes come off a non-blocking socket:
/// the status once the head is in, then the body, whole by Content-Length or
/// chunk by chunk (an event stream's), so that a reader sees each event the
/// moment its bytes are in rather than when the response ends.
struct ResponseReader {
    struct Malformed: Error, CustomStringConvertible { let description: String }

    private(set) var status: Int?
    /// The body decoded so far and not taken yet.
    private(set) var body: [UInt8] = []
    /// The whole response is in: its length reached, or its last chunk.
    private(set) var complete = false
    private var buffer: [UInt8] = []
    private var length = 0
    private var chunked = false
    /// Bytes left of the chunk being read; nil: a chunk-size line comes next.
    private var chunkLeft: Int?

    mutating func feed(_ bytes: ArraySlice<UInt8>) throws(Malformed) {
        buffer += bytes
        if status == nil {
            guard let end = Self.find([13, 10, 13, 10], in: buffer) else { return }
            try readHead(String(decoding: buffer[..<end], as: UTF8.self))
            buffer.removeFirst(end + 4)
        }
        chunked ? try readChunks() : readLength()
    }

    /// Hands over the body read so far (a stream's events as they come).
    mutating func takeBody() -> [UInt8] {
        defer { body = [] }
        return body
    }

    private mutating func readHead(_ head: String) throws(Malformed) {
        let lines = head.split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, let code = Int(parts[1]) else { throw Malformed(description: "no status line") }
        status = code
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard pair.count == 2 else { continue }
            if pair[0] == "content-length" { length = Int(pair[1]) ?? 0 }
            if pair[0] == "transfer-encoding" { chunked = pair[1].contains("chunked") }
        }
    }

    private mutating func readLength() {
        let take = min(length - body.count, buffer.count)
        body += buffer[..<take]
        buffer.removeFirst(take)
        complete = body.count == length
    }

    private mutating func readChunks() throws(Malformed) {
        while !complete {
            if let left = chunkLeft {
                let take = min(left, buffer.count)
                body += buffer[..<take]
                buffer.removeFirst(take)
                chunkLeft = left - take
                // A chunk's data ends with CRLF.
                guard chunkLeft == 0, buffer.count >= 2 else { return }
                buffer.removeFirst(2)
                chunkLeft = nil
            } else {
                guard let end = Self.find([13, 10], in: buffer) else { return }
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else { throw Malformed(description: "bad chunk size") }
                if size == 0 {
                    // The last chunk, then (no trailers) the CRLF that ends the body.
                    guard buffer.count >= end + 4 else { return }
                    buffer.removeFirst(end + 4)
                    complete = true
                } else {
                    buffer.removeFirst(end + 2)
                    chunkLeft = size
                }
            }
        }
    }

    static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { start in pattern.indices.allSatisfy { bytes[start + $0] == pattern[$0] } }
    }
}
