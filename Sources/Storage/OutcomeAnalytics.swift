import Foundation
import Postgres

/// The outcome analytics `veridoc stats` and `veridoc report` show, read
/// from the SQL views over the non-personal outcome facts (migration 3:
/// `outcome_counts_hourly`, `outcome_facts_hourly`,
/// `processing_latency_hourly`). Period latency percentiles cannot be
/// combined from hourly ones, so those are computed from `results` with the
/// same expressions.
public struct AnalyticsSnapshot: Sendable {
    public struct Outcome: Sendable, Equatable {
        public let tenant, flow, docType, issuerCountry, verdict: String
        public let count: Int
    }
    public struct Reason: Sendable, Equatable {
        public let tenant, flow, reason: String
        public let count: Int
    }
    public struct Hour: Sendable, Equatable {
        public let hour: Date
        public let verified: Int
        public let rejected: Int
    }
    /// Outcomes by how the holder's device authenticated (migration 13):
    /// `method` "signature" or "mac", `reader` the registered reader of a MAC.
    public struct DeviceAuthentication: Sendable, Equatable {
        public let tenant, flow, verdict, method, reader: String
        public let count: Int
    }
    /// Outcomes by revocation status (migration 14): `status` the word of the
    /// outcome's `status` (none, valid, revoked, …), `later` a revoked or
    /// suspended found after acceptance, or "-".
    public struct Revocation: Sendable, Equatable {
        public let tenant, verdict, status, later: String
        public let count: Int
    }
    /// Age checks asked (migration 18): `atLeast` the age. Results keep
    /// neither the answers nor what answered them.
    public struct AgeCheck: Sendable, Equatable {
        public let tenant, docType, verdict: String
        public let atLeast: Int
        public let count: Int
    }
    /// Elements the accepted results returned, by name (migration 8's
    /// `elements` view): whether the request asked for each and the
    /// retention decided for it. Names only; values are not analytics.
    public struct ElementCount: Sendable, Equatable {
        public let tenant, docType, namespace, element: String
        public let requested: Bool
        public let intent: String
        public let count: Int
    }
    public struct Latency: Sendable, Equatable {
        public let hour: Date?
        public let tenant, flow: String
        public let count: Int
        public let p50, p90, p99: Double
    }

    /// The start of the period: the requested start rounded down to the hour (views are hourly).
    public let since: Date
    public let tenant: String?
    public let outcomes: [Outcome]
    public let reasons: [Reason]
    public let hours: [Hour]
    public let latency: [Latency]
    public let hourlyLatency: [Latency]
    public var deviceAuthentication: [DeviceAuthentication] = []
    public var revocation: [Revocation] = []
    public var ageChecks: [AgeCheck] = []
    public var elements: [ElementCount] = []
    /// Which outcomes were read: production only unless asked (migration 11).
    public var assurance: AssuranceScope = .production

    /// Which outcomes analytics read: test tenants' outcomes (Apple's Simulator
    /// and developer profiles) are kept apart from production by default.
    public enum AssuranceScope: String, Sendable, CaseIterable {
        case production
        case test
        case all

        /// The `assurance` column's value to match; nil for all.
        var column: String? { self == .all ? nil : rawValue }
    }

    public static func load(since requested: Date, tenant: String?, assurance: AssuranceScope = .production,
                            on connection: PostgresConnection) throws -> AnalyticsSnapshot {
        let since = Date(timeIntervalSince1970: (requested.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
        let filter = "hour >= ($1::timestamptz AT TIME ZONE 'UTC') AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR assurance = $3)"
        let parameters: [PostgresValue] = [.timestamp(since), tenant.map(PostgresValue.text) ?? .null, assurance.column.map(PostgresValue.text) ?? .null]

        let outcomeRows = try connection.execute("""
            SELECT tenant, flow, doc_type, issuer_country, verdict, sum(count)::bigint AS count FROM outcome_counts_hourly
            WHERE \(filter) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            """, parameters)
        let outcomes = (0..<outcomeRows.rowCount).map { row in
            Outcome(tenant: outcomeRows.string(row, "tenant") ?? "", flow: outcomeRows.string(row, "flow") ?? "",
                    docType: outcomeRows.string(row, "doc_type") ?? "", issuerCountry: outcomeRows.string(row, "issuer_country") ?? "",
                    verdict: outcomeRows.string(row, "verdict") ?? "", count: Int(outcomeRows.int(row, "count") ?? 0))
        }

        let reasonRows = try connection.execute("""
            SELECT tenant, flow, reason_code, sum(count)::bigint AS count FROM outcome_facts_hourly
            WHERE \(filter) GROUP BY 1, 2, 3 ORDER BY 1, 2, 4 DESC, 3
            """, parameters)
        let reasons = (0..<reasonRows.rowCount).map { row in
            Reason(tenant: reasonRows.string(row, "tenant") ?? "", flow: reasonRows.string(row, "flow") ?? "",
                   reason: reasonRows.string(row, "reason_code") ?? "", count: Int(reasonRows.int(row, "count") ?? 0))
        }

        let hourRows = try connection.execute("""
            SELECT hour, sum(count) FILTER (WHERE verdict IN ('verified', 'test_verified'))::bigint AS verified,
                   sum(count) FILTER (WHERE verdict IN ('rejected', 'test_rejected'))::bigint AS rejected
            FROM outcome_counts_hourly WHERE \(filter) GROUP BY 1 ORDER BY 1
            """, parameters)
        let hours = (0..<hourRows.rowCount).compactMap { row -> Hour? in
            guard let hour = hourRows.date(row, "hour") else { return nil }
            return Hour(hour: hour, verified: Int(hourRows.int(row, "verified") ?? 0), rejected: Int(hourRows.int(row, "rejected") ?? 0))
        }

        let latencyRows = try connection.execute("""
            SELECT COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow, count(*)::bigint AS count,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY processing_seconds) AS p50,
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY processing_seconds) AS p90,
                   percentile_cont(0.99) WITHIN GROUP (ORDER BY processing_seconds) AS p99
            FROM results WHERE verified_at >= $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR assurance = $3)
            GROUP BY 1, 2 ORDER BY 1, 2
            """, parameters)
        let hourlyRows = try connection.execute(
            "SELECT hour, tenant, flow, count, p50, p90, p99 FROM processing_latency_hourly WHERE \(filter) ORDER BY hour, tenant, flow",
            parameters)
        func latencies(_ result: PostgresResult, hourly: Bool) -> [Latency] {
            (0..<result.rowCount).map { row in
                Latency(hour: hourly ? result.date(row, "hour") : nil, tenant: result.string(row, "tenant") ?? "", flow: result.string(row, "flow") ?? "",
                        count: Int(result.int(row, "count") ?? 0), p50: result.double(row, "p50") ?? 0, p90: result.double(row, "p90") ?? 0,
                        p99: result.double(row, "p99") ?? 0)
            }
        }
        // From results, as the latency: device authentication came after the hourly views.
        let deviceRows = try connection.execute("""
            SELECT COALESCE(tenant, '(none)') AS tenant, COALESCE(flow, '(none)') AS flow, verdict, device_auth,
                   COALESCE(device_reader, '-') AS device_reader, count(*)::bigint AS count
            FROM results WHERE verified_at >= $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR assurance = $3)
              AND device_auth IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            """, parameters)
        let devices = (0..<deviceRows.rowCount).map { row in
            DeviceAuthentication(
                tenant: deviceRows.string(row, "tenant") ?? "", flow: deviceRows.string(row, "flow") ?? "", verdict: deviceRows.string(row, "verdict") ?? "",
                method: deviceRows.string(row, "device_auth") ?? "", reader: deviceRows.string(row, "device_reader") ?? "-",
                count: Int(deviceRows.int(row, "count") ?? 0))
        }
        let revocationRows = try connection.execute("""
            SELECT COALESCE(tenant, '(none)') AS tenant, verdict, revocation_status, COALESCE(later_status, '-') AS later_status,
                   count(*)::bigint AS count
            FROM results WHERE verified_at >= $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR assurance = $3)
              AND revocation_status IS NOT NULL
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            """, parameters)
        let revocation = (0..<revocationRows.rowCount).map { row in
            Revocation(
                tenant: revocationRows.string(row, "tenant") ?? "", verdict: revocationRows.string(row, "verdict") ?? "",
                status: revocationRows.string(row, "revocation_status") ?? "", later: revocationRows.string(row, "later_status") ?? "-",
                count: Int(revocationRows.int(row, "count") ?? 0))
        }
        let ageRows = try connection.execute("""
            SELECT COALESCE(tenant, '(none)') AS tenant, COALESCE(doc_type, '(none)') AS doc_type, verdict,
                   asked.age::integer AS at_least, count(*)::bigint AS count
            FROM results CROSS JOIN LATERAL unnest(age_checks) AS asked(age)
            WHERE verified_at >= $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR assurance = $3) AND age_checks IS NOT NULL
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            """, parameters)
        let ageChecks = (0..<ageRows.rowCount).map { row in
            AgeCheck(tenant: ageRows.string(row, "tenant") ?? "", docType: ageRows.string(row, "doc_type") ?? "",
                     verdict: ageRows.string(row, "verdict") ?? "", atLeast: Int(ageRows.int(row, "at_least") ?? 0),
                     count: Int(ageRows.int(row, "count") ?? 0))
        }
        let elementRows = try connection.execute("""
            SELECT COALESCE(r.tenant, '(none)') AS tenant, COALESCE(r.doc_type, '(none)') AS doc_type, e.namespace, e.element,
                   e.requested, e.retention_intent, count(*)::bigint AS count
            FROM results r JOIN elements e ON e.event_id = r.event_id
            WHERE r.verified_at >= $1 AND ($2::text IS NULL OR r.tenant = $2) AND ($3::text IS NULL OR r.assurance = $3)
              AND r.verdict IN ('verified', 'test_verified')
            GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
            """, parameters)
        let elements = (0..<elementRows.rowCount).map { row in
            ElementCount(tenant: elementRows.string(row, "tenant") ?? "", docType: elementRows.string(row, "doc_type") ?? "",
                         namespace: elementRows.string(row, "namespace") ?? "", element: elementRows.string(row, "element") ?? "",
                         requested: elementRows.bool(row, "requested") ?? false, intent: elementRows.string(row, "retention_intent") ?? "",
                         count: Int(elementRows.int(row, "count") ?? 0))
        }
        return AnalyticsSnapshot(
            since: since, tenant: tenant, outcomes: outcomes, reasons: reasons, hours: hours,
            latency: latencies(latencyRows, hourly: false), hourlyLatency: latencies(hourlyRows, hourly: true), deviceAuthentication: devices,
            revocation: revocation, ageChecks: ageChecks, elements: elements, assurance: assurance)
    }
}
