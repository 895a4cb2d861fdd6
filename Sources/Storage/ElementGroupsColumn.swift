import Foundation
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
    /// One group: the elements of one namespace with one decision, a row of
    /// the view `element_groups` (whose `event_id` is the result's own).
    public struct Group: Sendable, Equatable {
        public var namespace: String
        /// The names, in disclosure order.
        public var elements: [String]
        public var requested: Bool
        /// `retention_intent` and `retention_days`.
        public var retention: Retention
        /// `retention_source`.
        public var source: String
        /// `retention_capped`.
        public var capped: Bool
        /// `retain_until`; nil when the values are not kept.
        public var retainUntil: RetainUntil?

        public init(namespace: String, elements: [String], requested: Bool, retention: Retention, source: String, capped: Bool,
                    retainUntil: RetainUntil?) {
            self.namespace = namespace
            self.elements = elements
            self.requested = requested
            self.retention = retention
            self.source = source
            self.capped = capped
            self.retainUntil = retainUntil
        }
    }

    /// A group's intent: `willNotStore`, or `mayStore` with a limit in days or none.
    public enum Retention: Sendable, Hashable {
        case willNotStore
        case mayStore(days: Int?)
    }

    /// The column's value for one event's groups, encoded once (by whoever
    /// has the time: the worker does it on its verification threads, not on
    /// the thread that writes the batch).
    public struct Value: Sendable, Equatable {
        /// The JSON text; nil (NULL) for an event without elements.
        let json: String?

        /// Members `namespace`, `elements`, `requested`, `intent`, `days`,
        /// `source`, `capped` and `until` (RFC 3339 in UTC with microseconds,
        /// or `infinity`); `days` and `until` are left out when there are
        /// none, and an instant PostgreSQL cannot hold is written as null.
        public init(_ groups: [Group]) {
            guard !groups.isEmpty else {
                json = nil
                return
            }
            var json = JSONStream(capacity: 160 * groups.count)
            json.beginArray()
            for group in groups {
                json.beginObject()
                json.key("capped"); json.value(.bool(group.capped))
                let intent: String
                switch group.retention {
                case .willNotStore: intent = "willNotStore"
                case .mayStore(let days):
                    intent = "mayStore"
                    if let days { json.key("days"); json.integer(days) }
                }
                json.key("elements")
                json.beginArray()
                for name in group.elements { json.string(name) }
                json.endArray()
                json.key("intent"); json.string(intent)
                json.key("namespace"); json.string(group.namespace)
                json.key("requested"); json.value(.bool(group.requested))
                json.key("source"); json.string(group.source)
                switch group.retainUntil {
                case nil: break
                case .never: json.key("until"); json.string("infinity")
                case .at(let date): json.key("until"); json.string(orNull: PostgresValue.timestampText(date))
                }
                json.endObject()
            }
            json.endArray()
            self.json = json.string
        }

        var parameter: PostgresValue { json.map(PostgresValue.text) ?? .null }
    }
}

/// When a kept value expires (`retain_until`): at an instant, or never
/// (PostgreSQL's `infinity`).
public enum RetainUntil: Sendable, Hashable {
    case at(Date)
    case never

    var parameter: PostgresValue {
        switch self {
        case .at(let date): .timestamp(date)
        case .never: .text("infinity")
        }
    }
}
