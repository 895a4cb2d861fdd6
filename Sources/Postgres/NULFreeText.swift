import Foundation

/// PostgreSQL text cannot hold U+0000, and libpq reads text parameters as C
/// strings (a NUL would cut the value short): every text value on its way out
/// goes through this one check.
enum NULFreeText {
    /// Appends `text`'s UTF-8 to `out` unless it contains U+0000; false, with nothing appended, if it does.
    static func append(_ text: String, to out: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return true }
            if memchr(base, 0, utf8.count) != nil { return false }
            out.append(contentsOf: utf8)
            return true
        }
    }
}
