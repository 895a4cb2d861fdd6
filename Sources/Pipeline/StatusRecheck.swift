import Crypto
import Foundation
import MDoc
import Observability
import Postgres
import Revocation
import Storage
import Verification
import Webhooks

/// Accepted credentials read again while their results are retained
/// (docs/revocation.md): every pass, each list retained references name is
/// asked of the status service (which fetches it again once its `ttl` ran
/// out), and each reference read from it, with the CRLs the document's
/// certificates name. A credential found revoked or
/// suspended since it was accepted is recorded beside its result
/// (`later_status`) and announced once on the outcome topic
/// (`StatusChangedEvent`, through the outbox), in one transaction.
struct StatusRechecker: Sendable {
    let service: StatusService
    let directory: TenantDirectory
    /// Whose status changes make webhook deliveries.
    var webhooks = WebhookDirectory.none
    /// Lists read per pass, and references per batch of one list.
    var maxLists = 1_000
    var batchSize = 500

    struct Report: Sendable, Equatable {
        var lists = 0
        var checked = 0
        var changed = 0
    }

    func pass(now: Date, on connection: PostgresConnection) throws -> Report {
        var report = Report()
        let lists = try connection.execute(StatusReferencesTable.listsInUse(at: now, limit: maxLists))
        for row in 0..<lists.rowCount {
            guard let kindName = lists.string(row, "list_kind"), let kind = StatusReferencesTable.Kind(rawValue: kindName),
                  let uri = lists.string(row, "list_uri")
            else { continue }
            report.lists += 1
            var after: (String, Int32) = ("", -1)
            while true {
                let rows = try connection.execute(StatusReferencesTable.references(to: kind, uri: uri, after: after.0, after.1, at: now, limit: batchSize))
                guard rows.rowCount > 0 else { break }
                var stored: [StoredReference] = []
                for index in 0..<rows.rowCount {
                    if let reference = StoredReference(rows, index, kind: kind, uri: uri, directory: directory) { stored.append(reference) }
                }
                after = (rows.string(rows.rowCount - 1, "event_id") ?? "", Int32(rows.int(rows.rowCount - 1, "document") ?? 0))
                let answers = stored.isEmpty ? [] : service.resolve(stored.map(\.query), at: now)
                report.checked += stored.count
                for (reference, answer) in zip(stored, answers) {
                    let status: String
                    switch answer {
                    case .revoked: status = "revoked"
                    case .suspended: status = "suspended"
                    default: continue
                    }
                    if try record(reference, status: status, now: now, on: connection) { report.changed += 1 }
                }
                if rows.rowCount < batchSize { break }
            }
        }
        return report
    }

    /// The later status and its event, once: false when another pass or worker recorded it first.
    private func record(_ reference: StoredReference, status: String, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.transaction { connection in
            let updated = try connection.execute(ResultsTable.recordLaterStatus(eventID: reference.eventID, status: status))
            guard updated.rowCount == 1 else { return false }
            let event = StatusChangedEvent(requestID: reference.eventID, tenant: reference.tenant, document: reference.query.document, status: status,
                                           acceptedStatus: reference.acceptedStatus, detectedAt: now)
            let json = event.json()
            try connection.execute(OutboxTable.insertUnclaimed([
                OutboxTable.Row(id: event.id, eventID: reference.eventID, key: Array(reference.eventID.utf8), payload: json, hasClaims: false),
            ]))
            let deliveries = webhooks.deliveries(tenant: reference.tenant, eventType: StatusChangedEvent.eventType, webhookID: event.id,
                                                 eventID: reference.eventID, payload: json, hasClaims: false)
            if !deliveries.isEmpty { try connection.execute(WebhookDeliveriesTable.insert(deliveries)) }
            return true
        }
    }

    /// One stored reference as a status query, under its tenant's current
    /// policy; nil where the tenant is gone, has turned re-checks off, or
    /// the row does not read (it is then left for purge).
    private struct StoredReference {
        let eventID: String
        let tenant: String
        let acceptedStatus: String
        let query: StatusQuery

        init?(_ rows: PostgresResult, _ row: Int, kind: StatusReferencesTable.Kind, uri: String, directory: TenantDirectory) {
            guard let eventID = rows.string(row, "event_id"), let tenantID = rows.string(row, "tenant"), let tenant = directory[tenantID],
                  tenant.statusPolicy.recheckAfterAcceptance, tenant.statusPolicy.mode != .off,
                  let document = rows.int(row, "document"), let signerDER = rows.bytes(row, "document_signer"),
                  let anchorDER = rows.bytes(row, "issuing_anchor"),
                  let signer = try? Certificate.cached(der: signerDER), let anchor = try? Certificate.cached(der: anchorDER)
            else { return nil }
            let certificate = rows.bytes(row, "reference_certificate")
            let reference: MSOStatus
            switch kind {
            case .statusList:
                guard let index = rows.int(row, "list_index"), let unsigned = UInt64(exactly: index) else { return nil }
                reference = MSOStatus(statusList: .init(index: unsigned, uri: uri, certificate: certificate))
            case .identifierList:
                guard let id = rows.bytes(row, "list_id") else { return nil }
                reference = MSOStatus(identifierList: .init(id: id, uri: uri, certificate: certificate))
            case .certificateRevocationList:
                // The query finds the CRLs from the signer and the anchor.
                reference = MSOStatus()
            }
            self.eventID = eventID
            self.tenant = tenantID
            self.acceptedStatus = rows.string(row, "accepted_status") ?? "valid"
            query = StatusQuery(document: Int(document), reference: reference, documentSigner: signer, issuingAnchor: anchor, policy: tenant.statusPolicy)
        }
    }
}

/// The worker's re-check thread: every interval, the lists in use renewed
/// ahead of their `ttl`, then one `StatusRechecker` pass on its own
/// connection. Logs counts only.
enum StatusRecheck {
    static func loop(_ rechecker: StatusRechecker, interval: TimeInterval, connect: @escaping @Sendable () throws -> PostgresConnection, log: Logger,
                     metrics: PipelineMetrics) -> PeriodicPass<StatusRechecker.Report> {
        PeriodicPass(
            name: "veridoc-status-recheck", interval: interval, connect: connect,
            pass: { connection in
                // Lists events used lately are renewed before they go stale, retained or not.
                rechecker.service.prefetch(horizon: interval)
                return try rechecker.pass(now: Date(), on: connection)
            },
            report: { result in
                switch result {
                case .success(let report):
                    metrics.statusRechecked.increment(by: Double(report.checked))
                    metrics.statusChangedAfterAcceptance.increment(by: Double(report.changed))
                    let fields = ["lists": "\(report.lists)", "checked": "\(report.checked)", "changed": "\(report.changed)"]
                    if report.changed > 0 { log.info("status re-check pass", fields) } else { log.debug("status re-check pass", fields) }
                case .failure(let error):
                    log.warning("status re-check pass failed; retrying next interval", ["code": (error as? PostgresError)?.sqlState ?? "error"])
                }
            })
    }
}
