extension HTTPDaemon {
    /// Why a request whose headers are in is refused with 400 before any
    /// handler sees it, or nil. Each case is one where two readers of the same
    /// bytes may disagree (RFC 9112 §6.3: a proxy and this server framing the
    /// body differently, or choosing different credentials), or where
    /// libmicrohttpd's decoding would hide what the client sent (a NUL ends
    /// the C string; a dot segment names another path once normalized).
    /// `target` is the request target as sent; `counts` how many times each
    /// lowercased header name came. The reason names the rule, never a value.
    static func framingProblem(target: String, headers: [String: String], counts: [String: Int]) -> String? {
        if counts["content-length", default: 0] > 1 { return "more than one Content-Length" }
        if counts["transfer-encoding", default: 0] > 1 { return "more than one Transfer-Encoding" }
        if counts["content-length"] != nil && counts["transfer-encoding"] != nil { return "both Content-Length and Transfer-Encoding" }
        if let length = headers["content-length"], length.isEmpty || !length.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return "a Content-Length that is not a number"
        }
        if let coding = headers["transfer-encoding"], coding.trimmingBlanks.lowercasedASCII != "chunked" { return "a Transfer-Encoding other than chunked" }
        if counts["authorization", default: 0] > 1 { return "more than one Authorization" }
        return targetProblem(target)
    }

    /// A NUL (sent as is or as %00) anywhere in the target, or a `.` or `..`
    /// path segment, also percent-encoded (`%2e`, `.%2E`).
    static func targetProblem(_ target: String) -> String? {
        let bytes = Array(target.utf8)
        if bytes.contains(0) { return "a NUL in the target" }
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: "%") && bytes[index + 1] == UInt8(ascii: "0") && bytes[index + 2] == UInt8(ascii: "0") {
                return "a NUL in the target"
            }
            index += 1
        }
        let path = bytes.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            // Dots only, each written as "." or "%2e" in any case: one or two of them is a dot segment.
            var dots = 0
            var rest = segment[...]
            while !rest.isEmpty {
                if rest.first == UInt8(ascii: ".") {
                    rest = rest.dropFirst()
                } else if rest.count >= 3, rest.first == UInt8(ascii: "%"), rest.dropFirst().first == UInt8(ascii: "2"),
                          rest.dropFirst(2).first.map({ $0 | 0x20 }) == UInt8(ascii: "e") {
                    rest = rest.dropFirst(3)
                } else {
                    dots = 0
                    break
                }
                dots += 1
            }
            if dots == 1 || dots == 2 { return "a dot segment in the path" }
        }
        return nil
    }
}

private extension String {
    var trimmingBlanks: Substring {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}

private extension Substring {
    var lowercasedASCII: String { String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self) }
}
