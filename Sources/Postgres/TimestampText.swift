import CivilDate
import Foundation

/// Converts between `Date` and PostgreSQL's text forms of timestamps, in pure
/// integer arithmetic on microseconds (PostgreSQL's own resolution), so no
/// Calendar, locale or time-zone database is involved.
enum TimestampText {
    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    private static let referenceOffsetMicroseconds: Int64 = 978_307_200 * 1_000_000
    private static let microsecondsPerDay: Int64 = 86_400 * 1_000_000

    /// RFC 3339 in UTC with six fractional digits, or nil outside years 0001–9999.
    static func format(_ date: Date) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        guard append(date, to: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(date)`'s 27 bytes (`2026-11-29T12:51:44.123456Z`) to `out`
    /// without building strings on the way; false (nothing appended) outside years 0001–9999.
    static func append(_ date: Date, to out: inout [UInt8]) -> Bool {
        guard let micros = microsecondsSince1970(date) else { return false }
        let days = CivilDate.floorDiv(micros, microsecondsPerDay)
        let ofDay = micros - days * microsecondsPerDay
        let (year, month, day) = CivilDate.civil(fromDays: days)
        let seconds = ofDay / 1_000_000
        digits(year, 4, &out); out.append(UInt8(ascii: "-"))
        digits(month, 2, &out); out.append(UInt8(ascii: "-"))
        digits(day, 2, &out); out.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2, &out); out.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2, &out); out.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2, &out); out.append(UInt8(ascii: "."))
        digits(ofDay % 1_000_000, 6, &out); out.append(UInt8(ascii: "Z"))
        return true
    }

    /// Microseconds from 1970-01-01T00:00:00Z, rounded to the nearest, as every
    /// form a timestamp is sent in stores it; nil outside years 0001–9999.
    static func microsecondsSince1970(_ date: Date) -> Int64? {
        // Scaling the reference-date interval (not the 1970 one) keeps the
        // sub-microsecond precision a Date actually has.
        let scaled = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e17 else { return nil }
        let micros = Int64(scaled) + referenceOffsetMicroseconds
        guard (firstMicrosecond...lastMicrosecond).contains(micros) else { return nil }
        return micros
    }

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z.
    private static let firstMicrosecond = CivilDate.days(fromCivil: 1, 1, 1) * microsecondsPerDay
    private static let lastMicrosecond = CivilDate.days(fromCivil: 10_000, 1, 1) * microsecondsPerDay - 1

    /// `value` (0 ≤ value < 10^width) in exactly `width` decimal digits.
    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Reads PostgreSQL's ISO output (`DateStyle` ISO, which the connection
    /// ensures): `2026-11-29 12:51:44.123456+00`, offsets like `+05:30` or
    /// `-03:00:15`, an optional ` BC`; a plain `2026-11-29` (date) or an offset-less
    /// timestamp is read as UTC. `infinity` and anything unparsable give nil.
    static func parse<Bytes: Collection<UInt8>>(_ text: Bytes) -> Date? {
        var scanner = Scanner(Array(text))
        guard var year = scanner.integer(minDigits: 4, maxDigits: 7), scanner.skip(UInt8(ascii: "-")),
              let month = scanner.integer(exactly: 2), scanner.skip(UInt8(ascii: "-")),
              let day = scanner.integer(exactly: 2),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var ofDay: Int64 = 0
        if scanner.skip(UInt8(ascii: " ")) || scanner.skip(UInt8(ascii: "T")) {
            guard let hour = scanner.integer(exactly: 2), scanner.skip(UInt8(ascii: ":")),
                  let minute = scanner.integer(exactly: 2), scanner.skip(UInt8(ascii: ":")),
                  let second = scanner.integer(exactly: 2),
                  hour <= 24, minute < 60, second < 61
            else { return nil }
            ofDay = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if scanner.skip(UInt8(ascii: ".")) {
                var digits = 0
                var fraction: Int64 = 0
                while let digit = scanner.digit() {
                    // Beyond microseconds PostgreSQL never prints; ignore rather than fail.
                    if digits < 6 { fraction = fraction * 10 + digit }
                    digits += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 6) { fraction *= 10 }
                ofDay += fraction
            }
            if let sign = scanner.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                scanner.advance()
                guard let hours = scanner.integer(exactly: 2) else { return nil }
                var offset = hours * 3600
                if scanner.skip(UInt8(ascii: ":")) {
                    guard let minutes = scanner.integer(exactly: 2) else { return nil }
                    offset += minutes * 60
                    if scanner.skip(UInt8(ascii: ":")) {
                        guard let seconds = scanner.integer(exactly: 2) else { return nil }
                        offset += seconds
                    }
                }
                // Local time = UTC + offset, so UTC = local − offset.
                ofDay -= (sign == UInt8(ascii: "+") ? offset : -offset) * 1_000_000
            } else {
                _ = scanner.skip(UInt8(ascii: "Z"))
            }
        }
        if scanner.skipLiteral(" BC") { year = 1 - year }
        guard scanner.atEnd else { return nil }
        let micros = CivilDate.days(fromCivil: year, month, day) * microsecondsPerDay + ofDay
        return Date(timeIntervalSinceReferenceDate: Double(micros - referenceOffsetMicroseconds) / 1_000_000)
    }


    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }
        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
        mutating func advance() { index += 1 }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func skipLiteral(_ literal: String) -> Bool {
            let utf8 = Array(literal.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else { return false }
            index += utf8.count
            return true
        }

        mutating func digit() -> Int64? {
            guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            index += 1
            return Int64(byte - UInt8(ascii: "0"))
        }

        mutating func integer(exactly count: Int) -> Int64? { integer(minDigits: count, maxDigits: count) }

        mutating func integer(minDigits: Int, maxDigits: Int) -> Int64? {
            let start = index
            var value: Int64 = 0
            while index - start < maxDigits, let digit = digit() { value = value * 10 + digit }
            guard index - start >= minDigits else { index = start; return nil }
            return value
        }
    }
}
