import JSON
import Postgres

/// `results.element_groups`: the names and retention decisions of an
/// event's disclosed elements, never their values, as a JSON array with an
/// object per namespace and decision listing its elements. The views
/// `element_groups` (a row per group) and `elements` (a row per element) read
/// it, and rows stored before migration 12 from the table it replaced.
///
/// A column of the result's own row rather than rows of their own: each row
/// (three or four an event) was a heap tuple, an index entry and WAL of its
/// own, where the result's row is written anyway.
public enum ElementGroupsColumn {
    /// The group layout writers follow (`RetentionWriter.elementGroupRows`),
    /// one value per column of the view `element_groups`.
    public static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("namespace", "text"), .init("elements", "text[]"), .init("requested", "boolean"),
        .init("retention_intent", "text"), .init("retention_days", "integer"), .init("retention_source", "text"),
        .init("retention_capped", "boolean"), .init("retain_until", "timestamptz"),
    ]

    /// The column's value for one event's groups (rows in `columns`' order,
    /// all of one event, whose id is not repeated): members `namespace`,
    /// `elements`, `requested`, `intent`, `days`, `source`, `capped` and
    /// `until` (RFC 3339 in UTC with microseconds, or `infinity`); `days`
    /// and `until` are left out when NULL. NULL for an event without
    /// elements.
    public static func value(_ groups: [[PostgresValue]]) -> PostgresValue {
        guard !groups.isEmpty else { return .null }
        var json = JSONStream(capacity: 160 * groups.count)
        json.beginArray()
        for group in groups where group.count == columns.count {
            json.beginObject()
            json.key("capped"); write(group[7], to: &json)
            if group[5] != .null { json.key("days"); write(group[5], to: &json) }
            json.key("elements"); write(group[2], to: &json)
            json.key("intent"); write(group[4], to: &json)
            json.key("namespace"); write(group[1], to: &json)
            json.key("requested"); write(group[3], to: &json)
            json.key("source"); write(group[6], to: &json)
            if group[8] != .null { json.key("until"); write(group[8], to: &json) }
            json.endObject()
        }
        json.endArray()
        return .text(json.string)
    }

    private static func write(_ value: PostgresValue, to json: inout JSONStream) {
        switch value {
        case .null: json.null()
        case .text(let text): json.string(text)
        case .textArray(let names):
            json.beginArray()
            for name in names { json.string(name) }
            json.endArray()
        case .bool(let flag): json.value(.bool(flag))
        case .int(let number): json.integer(Int(number))
        case .timestamp(let date): json.string(orNull: PostgresValue.timestampText(date))
        case .double, .bytes: json.null()
        }
    }
}
