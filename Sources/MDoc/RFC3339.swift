import CivilDate
import Foundation

/// RFC 3339 date-times (CBOR tag 0, CloudEvents `time`) and full-dates (tag 1004),
/// parsed by hand: strict, allocation-free and safe to call from any thread.
public enum RFC3339 {
    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; lowercase `t`/`z` allowed as RFC 3339 permits.
    public static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        var cursor = Cursor(bytes: bytes)
        guard let year = cursor.digits(4), cursor.expect(UInt8(ascii: "-")),
              let month = cursor.digits(2), cursor.expect(UInt8(ascii: "-")),
              let day = cursor.digits(2), cursor.expectAny([UInt8(ascii: "T"), UInt8(ascii: "t")]),
              let hour = cursor.digits(2), cursor.expect(UInt8(ascii: ":")),
              let minute = cursor.digits(2), cursor.expect(UInt8(ascii: ":")),
              let second = cursor.digits(2)
        else { return nil }
        var fraction = 0.0
        if cursor.expect(UInt8(ascii: ".")) {
            var scale = 0.1
            var count = 0
            while let digit = cursor.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
        }
        var offsetSeconds = 0
        if cursor.expectAny([UInt8(ascii: "Z"), UInt8(ascii: "z")]) {
            offsetSeconds = 0
        } else if let sign = cursor.signed(), let offsetHour = cursor.digits(2), cursor.expect(UInt8(ascii: ":")),
                  let offsetMinute = cursor.digits(2), offsetHour < 24, offsetMinute < 60 {
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard cursor.atEnd, hour < 24, minute < 60, second <= 60,
              let days = daysSinceEpoch(year: year, month: month, day: day)
        else { return nil }
        // A leap second is read as the last second of its minute.
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// `YYYY-MM-DD` as midnight UTC.
    public static func fullDate(from text: String) -> Date? {
        var cursor = Cursor(bytes: Array(text.utf8))
        guard let year = cursor.digits(4), cursor.expect(UInt8(ascii: "-")),
              let month = cursor.digits(2), cursor.expect(UInt8(ascii: "-")),
              let day = cursor.digits(2), cursor.atEnd,
              let days = daysSinceEpoch(year: year, month: month, day: day)
        else { return nil }
        return Date(timeIntervalSince1970: Double(days * 86_400))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, or with milliseconds when the date has them.
    public static func string(from date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let whole = Int(interval.rounded(.down))
        let milliseconds = Int(((interval - Double(whole)) * 1000).rounded())
        var days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        var secondsOfDay = whole - days * 86_400
        if milliseconds == 1000 { secondsOfDay += 1 }
        if secondsOfDay == 86_400 { days += 1; secondsOfDay = 0 }
        let (year, month, day) = civil(fromDays: days)
        let fraction = milliseconds > 0 && milliseconds < 1000 ? milliseconds : nil
        if (0...9999).contains(year) {
            // Written as bytes: every outcome event carries a few of these, and
            // padding through interpolated strings costs many times as much.
            return String(unsafeUninitializedCapacity: 24) { out in
                var next = 0
                func put(_ value: Int, _ width: Int) {
                    var value = value
                    for position in stride(from: next + width - 1, through: next, by: -1) {
                        out[position] = UInt8(ascii: "0") + UInt8(value % 10)
                        value /= 10
                    }
                    next += width
                }
                func put(_ byte: Unicode.Scalar) {
                    out[next] = UInt8(ascii: byte)
                    next += 1
                }
                put(year, 4); put("-"); put(month, 2); put("-"); put(day, 2); put("T")
                put(secondsOfDay / 3600, 2); put(":"); put(secondsOfDay / 60 % 60, 2); put(":"); put(secondsOfDay % 60, 2)
                if let fraction { put("."); put(fraction, 3) }
                put("Z")
                return next
            }
        }
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondsOfDay / 3600, 2)):\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2))"
        if let fraction { text += "." + pad(fraction, 3) }
        return text + "Z"
    }

    private struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func digit() -> Int? {
            guard index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 else { return nil }
            defer { index += 1 }
            return Int(bytes[index] - 0x30)
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func expectAny(_ options: [UInt8]) -> Bool {
            options.contains { expect($0) }
        }

        mutating func signed() -> Int? {
            if expect(UInt8(ascii: "+")) { return 1 }
            if expect(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int? {
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        return Int(CivilDate.days(fromCivil: Int64(year), Int64(month), Int64(day)))
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let (year, month, day) = CivilDate.civil(fromDays: Int64(days))
        return (Int(year), Int(month), Int(day))
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
