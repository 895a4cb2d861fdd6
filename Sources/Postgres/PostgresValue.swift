import Foundation

/// A statement parameter or inserted value.
///
/// How each case travels (see `ParameterBuffer`): `.text` goes with type OID 0
/// ("unknown"), so the server infers the column's type and a text value can fill
/// a uuid, jsonb, enum or varchar column; the other cases carry their own type so
/// `SELECT $1` and overloaded operators resolve without casts. Integers into
/// smaller integer or numeric columns use PostgreSQL's assignment casts.
public enum PostgresValue: Sendable, Equatable {
    case null
    /// UTF-8 text. PostgreSQL text cannot hold U+0000; such a value is rejected before sending.
    case text(String)
    /// bytea, sent in binary format so zero bytes and any length round-trip exactly.
    case bytes([UInt8])
    /// int8.
    case int(Int64)
    /// float8; infinities and NaN are sent as PostgreSQL spells them.
    case double(Double)
    case bool(Bool)
    /// timestamptz, sent as RFC 3339 text in UTC with microseconds
    /// (`2026-11-29T12:51:44.123456Z`); sub-microsecond parts are rounded, as
    /// PostgreSQL stores microseconds. Years 0001–9999 only. Store instants in
    /// timestamptz columns: into a plain `timestamp` column the server converts
    /// via the session's TimeZone, and `PostgresResult.date` reads such a column as UTC.
    case timestamp(Date)
    /// text[]; elements follow the same rule as `.text`.
    case textArray([String])
}

extension PostgresValue {
    /// `text` with each U+0000 replaced by U+FFFD, for text the caller does not
    /// control (names read from a credential, an unknown tenant's id): PostgreSQL
    /// cannot store U+0000, and refusing it would fail the whole statement —
    /// every other row of a batch with it.
    public static func storable(_ text: String) -> String {
        // memchr over the contiguous UTF-8: this runs for every element name
        // of every event, and `utf8.contains` walked it a byte at a time.
        let hasNUL = text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        } ?? text.utf8.contains(0)
        guard hasNUL else { return text }
        return String(decoding: text.utf8.flatMap { $0 == 0 ? [0xEF, 0xBF, 0xBD] : [$0] }, as: UTF8.self)
    }

    /// `date` as PostgreSQL reads a timestamptz `.timestamp(date)` sends (RFC 3339 in
    /// UTC with microseconds), for timestamps inside other values; nil outside years 0001–9999.
    public static func timestampText(_ date: Date) -> String? {
        TimestampText.format(date)
    }

    /// `date` as a timestamp, or NULL outside years 0001–9999, for dates the
    /// caller does not control (an event's `time`, an MSO's validity): RFC 3339
    /// writes years 0000 and, with an offset, 10000; sending one fails the
    /// statement, and with it every other row of the batch.
    public static func storableTimestamp(_ date: Date?) -> PostgresValue {
        guard let date, TimestampText.microsecondsSince1970(date) != nil else { return .null }
        return .timestamp(date)
    }
}
