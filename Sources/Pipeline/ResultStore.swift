import Crypto
import Foundation
import Kafka
import MDoc
import Postgres
import Retention
import Storage
import Verification
import Webhooks

/// An outcome waiting for the outcome topic: an outbox row.
typealias OutboxEntry = OutboxTable.Row

/// Writes one batch in one transaction: the nonce uses, the result rows (with
/// their elements' names and retention metadata), the encrypted value rows, the outbox
/// rows and the consumer position of every partition in the batch. Either all of it is durable or none of it is, which is what
/// makes processing into PostgreSQL exactly-once across crashes.
package struct ResultStore {
    let connection: PostgresConnection
    let groupID: String
    let workerID: String
    let nonceKey: [UInt8]
    let outboxClaim: TimeInterval
    let retention: RetentionWriter
    /// Whose outcomes make webhook deliveries, recorded in the same transaction.
    let webhooks: WebhookDirectory

    package init(connection: PostgresConnection, groupID: String, workerID: String, nonceKey: [UInt8], outboxClaim: TimeInterval, retention: RetentionWriter,
                 webhooks: WebhookDirectory = WebhookDirectory.none) {
        self.connection = connection
        self.groupID = groupID
        self.workerID = workerID
        self.nonceKey = nonceKey
        self.outboxClaim = outboxClaim
        self.retention = retention
        self.webhooks = webhooks
    }

    package struct Written {
        /// Outbox rows created by this batch (claimed by this worker).
        var outbox: [OutboxEntry] = []
        /// Events already stored by an earlier delivery.
        package var duplicates = 0
        /// The results this batch inserted (after the nonce decision), for metrics.
        package var stored: [VerificationResult] = []
        /// How the batch went in.
        package var path: Path = .stepByStep

        package enum Path: Sendable, Equatable {
            /// The inserts that decide in one round trip, the rows that follow from them and COMMIT in a second.
            case pipelined
            /// Statement by statement, each deciding from the one before (`pipelining: false`).
            case stepByStep
        }
    }

    /// `completions` with results are stored; all of them count towards `positions`.
    /// `pipelining: false` writes step by step whatever the batch (tests compare the two).
    package func write(_ completions: [Completion], positions: [TopicPartition: Int64], pipelining: Bool = true) throws -> Written {
        // Values are encrypted, and their expiry partitions made to exist, before
        // the transaction: partition creation is DDL and must not sit inside it.
        // Results the nonce check then rejects simply leave their rows unused.
        let storedAt = Date()
        // Event ids, tenants and nonce keys are matched by their bytes, as
        // PostgreSQL compares text: a set of Strings would merge Unicode-equivalent
        // ids that the database keeps apart.
        var values: [Identifier: [ElementValuesTable.Row]] = [:]
        var expiries: [Date] = []
        for completion in completions {
            guard let result = completion.result, result.isAccepted, let id = result.requestID, values[Identifier(id)] == nil else { continue }
            let rows = try completion.prepared?.values ?? retention.valueRows(for: result, storedAt: storedAt)
            values[Identifier(id)] = rows.rows
            expiries += rows.expiries
        }
        if !expiries.isEmpty { try retention.partitions.ensure(covering: expiries, now: storedAt, on: connection) }

        let items = completions.compactMap { completion in completion.result.map { (completion, $0) } }
        return try pipelining ? writeDecided(items, values: values, positions: positions)
            : writeStepByStep(items, values: values, positions: positions)
    }

    /// Any batch, whatever it holds, in two round trips: BEGIN, the nonce
    /// claims and the results rows, each `ON CONFLICT DO NOTHING RETURNING`
    /// what it inserted; then, decided by those answers, the replays' verdicts,
    /// the value and outbox rows of the new results, the positions,
    /// and COMMIT.
    ///
    /// Redeliveries and replays are ordinary traffic (4 % of the realistic
    /// mix, so most batches of 50 hold one): here they cost a returned row,
    /// not a batch written on the assumption that all is new, rolled back and
    /// written again when it is not. The inserts decide by their unique
    /// indexes, as the step-by-step path does, so what they find does not
    /// depend on a plan (a lookup by id, planned while the table is small, can
    /// go on scanning all of it for every batch), and another writer storing
    /// the same event meanwhile is waited for and then found.
    private func writeDecided(_ items: [(Completion, VerificationResult)], values: [Identifier: [ElementValuesTable.Row]],
                              positions: [TopicPartition: Int64]) throws -> Written {
        let uses = nonceUses(items)
        // Rows as if every nonce were new; a replay's verdict is corrected below.
        let assumed = firstUses(items, uses: uses)
        let results = resultRows(assumed)
        var opening: [PostgresStatement] = []
        if !uses.isEmpty { opening.append(try nonceStatement(uses, returningClaims: true)) }
        if !results.isEmpty {
            opening.append(try ResultsTable.insertNew(results))
        }

        return try connection.transaction(opening: opening) { answers in
            var claims = Set<Identifier>()
            if !uses.isEmpty {
                let claimed = answers[0]
                for row in 0..<claimed.rowCount {
                    if let tenant = claimed.string(row, "tenant"), let hash = claimed.bytes(row, "nonce_hash"), let owner = claimed.string(row, "event_id") {
                        claims.insert(Self.claimKey(tenant: tenant, hash: hash, eventID: owner))
                    }
                }
            }
            var newIDs = Set<Identifier>()
            if !results.isEmpty, let inserted = answers.last {
                for row in 0..<inserted.rowCount { if let id = inserted.string(row, "event_id") { newIDs.insert(Identifier(id)) } }
            }
            // A new result whose nonce this batch did not claim for it: the nonce
            // belongs to another event (stored before, or earlier in the batch).
            let decided = recordingReplays(in: assumed, items: items, uses: uses) { use in
                newIDs.contains(Identifier(use.eventID)) && !claims.contains(Self.claimKey(tenant: use.tenant, hash: use.hash, eventID: use.eventID))
            }
            let fresh = Self.firstOccurrences(decided) { newIDs.contains(Identifier($0)) }
            var statements = fresh.filter(\.nonceReused).map { item in
                ResultsTable.recordReplay(eventID: item.result.requestID ?? "", verdict: item.result.verdict,
                                          reasonCodes: item.result.report.reasons.map(\.code.rawValue))
            }
            if let kept = try valueStatement(fresh, values: values) { statements.append(kept) }
            if let references = try referenceStatement(fresh, values: values) { statements.append(references) }
            let outbox = outboxEntries(fresh)
            if !outbox.isEmpty { statements.append(try outboxStatement(outbox)) }
            if let deliveries = try deliveryStatement(fresh, outbox: outbox) { statements.append(deliveries) }
            if let sessions = sessionStatement(fresh, outbox: outbox) { statements.append(sessions) }
            if let positions = try positionStatement(positions) { statements.append(positions) }
            return (statements, Written(outbox: outbox, duplicates: decided.count - fresh.count, stored: fresh.map(\.result), path: .pipelined))
        }
    }

    /// Any batch, one statement at a time: nonces first (a nonce already used by
    /// another event makes its result a replay, as the owners read back show),
    /// then the results (an event already stored is a duplicate and adds
    /// nothing more), then the rows of the results that were new. Not the
    /// worker's path (`pipelining: false`): a second, independent way to the
    /// same decisions, which the tests hold the pipelined write against.
    private func writeStepByStep(_ items: [(Completion, VerificationResult)], values: [Identifier: [ElementValuesTable.Row]],
                                 positions: [TopicPartition: Int64]) throws -> Written {
        try connection.transaction { connection in
            let decided = try decideNonces(items, on: connection)
            var written = Written()
            let newIDs = try insertResults(decided, on: connection)
            written.duplicates = decided.count - newIDs.count
            let firsts = Self.firstOccurrences(decided) { newIDs.contains(Identifier($0)) }
            if let kept = try valueStatement(firsts, values: values) { try connection.execute(kept) }
            if let references = try referenceStatement(firsts, values: values) { try connection.execute(references) }
            written.outbox = outboxEntries(firsts)
            if !written.outbox.isEmpty { try connection.execute(try outboxStatement(written.outbox)) }
            if let deliveries = try deliveryStatement(firsts, outbox: written.outbox) { try connection.execute(deliveries) }
            if let sessions = sessionStatement(firsts, outbox: written.outbox) { try connection.execute(sessions) }
            written.stored = firsts.map(\.result)
            if let positions = try positionStatement(positions) { try connection.execute(positions) }
            return written
        }
    }

    // MARK: nonces

    private struct Decided {
        let completion: Completion
        var result: VerificationResult
        /// The nonce check turned the result into a replay (its prepared outcome no longer applies).
        var nonceReused = false
    }

    /// Whether storing `result` uses up its nonce (so the nonce check applies to it).
    static func consumesNonce(_ result: VerificationResult) -> Bool {
        result.isAccepted && (result.replayToken != nil || !result.presentationTokens.isEmpty) && result.tenant != nil && result.requestID != nil
    }

    /// The `nonces.tenant` of a presentation's identity (`PresentationIdentity`):
    /// no tenant id is empty, so these rows are one deployment-wide scope
    /// beside each tenant's own nonces.
    static let deploymentScope = ""

    /// A result that uses up its nonce: `index` into the batch's items; the nonce keyed per tenant, never stored as sent.
    private struct NonceUse {
        let index: Int
        let use: NoncesTable.Use
        var tenant: String { use.tenant }
        var hash: [UInt8] { use.hash }
        var eventID: String { use.eventID }
    }

    private func nonceUses(_ items: [(Completion, VerificationResult)]) -> [NonceUse] {
        var uses: [NonceUse] = []
        for (index, (_, result)) in items.enumerated() {
            guard Self.consumesNonce(result), let tenant = result.tenant, let eventID = result.requestID else { continue }
            if let token = result.replayToken {
                let hash = HMAC.authenticationCode(.sha256, key: nonceKey, data: Array(tenant.utf8) + [0] + token)
                uses.append(NonceUse(index: index, use: NoncesTable.Use(tenant: tenant, hash: hash, eventID: eventID)))
            }
            // Keyed like the nonces, under a label of their own: a stored hash tells nobody which tenant's traffic it came from.
            for token in Set(result.presentationTokens) {
                let hash = HMAC.authenticationCode(.sha256, key: nonceKey, data: Array("presentation".utf8) + [0] + token)
                uses.append(NonceUse(index: index, use: NoncesTable.Use(tenant: Self.deploymentScope, hash: hash, eventID: eventID)))
            }
        }
        return uses
    }

    private func nonceStatement(_ uses: [NonceUse], returningClaims: Bool = false) throws -> PostgresStatement {
        try NoncesTable.claim(uses.map(\.use), at: Date(), returningClaims: returningClaims)
    }

    /// Verified results consume their nonce; a nonce already consumed by a
    /// different event makes the result `request.nonce_reused`. The same
    /// event redelivered finds its own use and is not a replay.
    private func decideNonces(_ items: [(Completion, VerificationResult)], on connection: PostgresConnection) throws -> [Decided] {
        let uses = nonceUses(items)
        guard !uses.isEmpty else { return firstUses(items, uses: uses) }
        try connection.execute(try nonceStatement(uses))
        let lookup = try connection.execute(NoncesTable.owners(of: uses.map(\.use)))
        var owners: [Identifier: String] = [:]  // tenant \0 lowercaseHex(hash) → event id that owns the nonce
        for row in 0..<lookup.rowCount {
            if let tenant = lookup.string(row, "tenant"), let hash = lookup.bytes(row, "nonce_hash"), let owner = lookup.string(row, "event_id") {
                owners[Identifier(tenant + "\u{0}" + lowercaseHex(hash))] = owner
            }
        }
        return recordingReplays(in: firstUses(items, uses: uses), items: items, uses: uses) { use in
            !(owners[Identifier(use.tenant + "\u{0}" + lowercaseHex(use.hash))]?.hasSameUTF8(as: use.eventID) ?? false)
        }
    }

    private static func claimKey(tenant: String, hash: [UInt8], eventID: String) -> Identifier {
        Identifier(tenant + "\u{0}" + lowercaseHex(hash) + "\u{0}" + eventID)
    }

    /// The items, every use recorded as a first use of its nonce.
    private func firstUses(_ items: [(Completion, VerificationResult)], uses: [NonceUse]) -> [Decided] {
        var decided = items.map { Decided(completion: $0.0, result: $0.1) }
        for use in uses { decided[use.index].result = decided[use.index].result.recordingNonceCheck(reused: false) }
        return decided
    }

    /// `assumed` (from `firstUses`) with the uses `isReplay` picks recorded as
    /// replays instead, from the items' own results; the rest are left as they are.
    private func recordingReplays(in assumed: [Decided], items: [(Completion, VerificationResult)], uses: [NonceUse],
                                  isReplay: (NonceUse) -> Bool) -> [Decided] {
        var decided = assumed
        for use in uses where isReplay(use) {
            decided[use.index].result = items[use.index].1.recordingNonceCheck(reused: true, presentation: use.tenant == Self.deploymentScope)
            decided[use.index].nonceReused = true
        }
        return decided
    }

    // MARK: rows

    /// The items whose id `isNew` accepts, each id once: an id twice in one
    /// batch is stored once, with its first occurrence's row.
    private static func firstOccurrences(_ items: [Decided], isNew: (String) -> Bool) -> [Decided] {
        var seen = Set<Identifier>()
        return items.filter { item in
            guard let id = item.result.requestID else { return false }
            return isNew(id) && seen.insert(Identifier(id)).inserted
        }
    }

    /// One row per id, the first occurrence's.
    private func resultRows(_ items: [Decided]) -> [ResultsTable.Row] {
        var seen = Set<Identifier>()
        var rows: [ResultsTable.Row] = []
        for item in items {
            let result = item.result
            guard let id = result.requestID, seen.insert(Identifier(id)).inserted else { continue }
            let document = result.documents.first
            let ticket = item.completion.ticket
            rows.append(ResultsTable.Row(
                eventID: id, tenant: result.tenant, flow: result.flow?.rawValue, verdict: result.verdict,
                reasonCodes: result.report.reasons.map(\.code.rawValue), docType: document?.docType, issuerSubject: document?.issuerSubject,
                issuerCountry: document?.issuerCountry, msoSigned: document?.signed, msoValidFrom: document?.validFrom,
                msoValidUntil: document?.validUntil, eventTime: result.eventTime, receivedAt: item.completion.receivedAt,
                verifiedAt: result.verifiedAt, processingSeconds: max(0, result.verifiedAt.timeIntervalSince(item.completion.receivedAt)),
                sourceTopic: ticket.topicPartition.topic, sourcePartition: ticket.topicPartition.partition, sourceOffset: ticket.offset,
                assurance: result.assurance.isTest ? "test" : "production", testKind: result.assurance.kind?.rawValue,
                elementGroups: item.completion.prepared?.elementGroups ?? ElementGroupsColumn.Value(retention.elementGroups(for: result)),
                deviceAuth: document?.deviceAuthentication?.method, deviceReader: document?.deviceAuthentication?.reader))
            rows[rows.count - 1].revocationStatus = result.status?.word
            if !result.ageAnswers.isEmpty { rows[rows.count - 1].ageChecks = result.ageAnswers.map { String($0.threshold) } }
        }
        return rows
    }

    /// The ids of the results this inserted (the others were stored before).
    private func insertResults(_ items: [Decided], on connection: PostgresConnection) throws -> Set<Identifier> {
        let rows = resultRows(items)
        guard !rows.isEmpty else { return [] }
        let inserted = try connection.execute(ResultsTable.insertNew(rows))
        return Set((0..<inserted.rowCount).compactMap { inserted.string($0, "event_id").map(Identifier.init) })
    }

    /// The sealed values of the verified results among `items`.
    private func valueStatement(_ items: [Decided], values: [Identifier: [ElementValuesTable.Row]]) throws -> PostgresStatement? {
        let kept = items.filter(\.result.isAccepted).flatMap { values[Identifier($0.result.requestID ?? "")] ?? [] }
        guard !kept.isEmpty else { return nil }
        return try ElementValuesTable.insert(kept)
    }

    /// The revocation references of the accepted results among `items`
    /// whose documents named lists, kept as long as the result's values
    /// (the longest `retain_until` of its value rows): a result that keeps
    /// no value keeps no reference, and is not read again.
    private func referenceStatement(_ items: [Decided], values: [Identifier: [ElementValuesTable.Row]]) throws -> PostgresStatement? {
        var rows: [StatusReferencesTable.Row] = []
        for item in items where item.result.isAccepted {
            let result = item.result
            guard let id = result.requestID, let tenant = result.tenant, !result.resolvedStatus.isEmpty,
                  let retainUntil = Self.longest(values[Identifier(id)] ?? [])
            else { continue }
            for resolved in result.resolvedStatus {
                let accepted: String
                switch resolved.answer {
                case .valid: accepted = "valid"
                case .undetermined: accepted = "undetermined"
                default: continue
                }
                let query = resolved.query
                func row(_ kind: StatusReferencesTable.Kind, uri: String, index: Int64?, listID: [UInt8]?, certificate: [UInt8]?) -> StatusReferencesTable.Row {
                    StatusReferencesTable.Row(
                        eventID: id, document: Int32(query.document), kind: kind, tenant: tenant, uri: uri, index: index, id: listID,
                        referenceCertificate: certificate, documentSigner: query.documentSigner.der, issuingAnchor: query.issuingAnchor.der,
                        acceptedStatus: accepted, retainUntil: retainUntil)
                }
                if let list = query.reference.statusList, let index = Int64(exactly: list.index) {
                    rows.append(row(.statusList, uri: list.uri, index: index, listID: nil, certificate: list.certificate))
                }
                if let list = query.reference.identifierList {
                    rows.append(row(.identifierList, uri: list.uri, index: nil, listID: list.id, certificate: list.certificate))
                }
                // The MSO's rows bring the certificates' CRLs along when read again; without one, a row of its own.
                if !query.reference.hasReference, let uri = query.certificateLists.lazy.compactMap({ try? $0.location.get() }).first {
                    rows.append(row(.certificateRevocationList, uri: uri, index: nil, listID: nil, certificate: nil))
                }
            }
        }
        guard !rows.isEmpty else { return nil }
        return try StatusReferencesTable.insert(rows)
    }

    /// The latest `retain_until` of `rows`; nil when there are none.
    private static func longest(_ rows: [ElementValuesTable.Row]) -> RetainUntil? {
        var longest: Date?
        for row in rows {
            switch row.retainUntil {
            case .never: return .never
            case .at(let date): longest = max(longest ?? date, date)
            }
        }
        return longest.map(RetainUntil.at)
    }

    private func outboxEntries(_ items: [Decided]) -> [OutboxEntry] {
        items.compactMap { item -> OutboxEntry? in
            guard let eventID = item.result.requestID else { return nil }
            let prepared = item.nonceReused ? nil : item.completion.prepared?.outcome
            let encoded = prepared ?? EncodedOutcome(item.result, retention: retention)
            return OutboxEntry(id: OutcomeEvent.id(forRequest: eventID), eventID: eventID, key: item.completion.key,
                               payload: encoded.json, hasClaims: encoded.hasClaims)
        }
    }

    /// The webhook deliveries of the new outcomes: the event exactly as it goes to the outcome topic, to each endpoint of its tenant.
    private func deliveryStatement(_ items: [Decided], outbox: [OutboxEntry]) throws -> PostgresStatement? {
        guard !webhooks.isEmpty else { return nil }
        var tenants: [Identifier: String] = [:]
        for item in items { if let id = item.result.requestID, let tenant = item.result.tenant { tenants[Identifier(id)] = tenant } }
        let rows = outbox.flatMap { entry in
            tenants[Identifier(entry.eventID)].map { tenant in
                webhooks.deliveries(tenant: tenant, eventType: OutcomeEvent.eventType, webhookID: entry.id, eventID: entry.eventID,
                                    payload: entry.payload, hasClaims: entry.hasClaims)
            } ?? []
        }
        return rows.isEmpty ? nil : try WebhookDeliveriesTable.insert(rows)
    }

    /// The sessions of the new results whose nonce Veridoc issued, completed
    /// with their verdict and outcome: in the batch's transaction, so the
    /// session API and the outcome topic never disagree.
    private func sessionStatement(_ items: [Decided], outbox: [OutboxEntry]) -> PostgresStatement? {
        var payloads: [Identifier: String] = [:]
        for entry in outbox { payloads[Identifier(entry.eventID)] = entry.payload }
        let completions = items.compactMap { item -> SessionsTable.Completion? in
            guard let session = item.result.sessionID, let tenant = item.result.tenant, let id = item.result.requestID,
                  let outcome = payloads[Identifier(id)] else { return nil }
            guard let state = SessionState(verdict: item.result.verdict) else { return nil }
            return SessionsTable.Completion(tenant: tenant, id: session, status: state, outcome: outcome)
        }
        return completions.isEmpty ? nil : SessionsTable.complete(completions)
    }

    /// The rows, claimed by this worker until `outboxClaim` from now.
    private func outboxStatement(_ entries: [OutboxEntry]) throws -> PostgresStatement {
        try OutboxTable.insert(entries, claimedBy: workerID, until: Date().addingTimeInterval(outboxClaim))
    }

    private func positionStatement(_ positions: [TopicPartition: Int64]) throws -> PostgresStatement? {
        guard !positions.isEmpty else { return nil }
        let sorted = positions.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }
        return try ConsumerPositionsTable.advance(
            group: groupID, to: sorted.map { (topic: $0.key.topic, partition: $0.key.partition, nextOffset: $0.value) })
    }

    /// The stored starting positions of `partitions` for this group.
    static func positions(of partitions: [TopicPartition], group: String, on connection: PostgresConnection) throws -> [TopicPartition: Int64] {
        guard !partitions.isEmpty else { return [:] }
        let result = try connection.execute(ConsumerPositionsTable.read(group: group, topics: Array(Set(partitions.map(\.topic)))))
        let wanted = Set(partitions)
        var positions: [TopicPartition: Int64] = [:]
        for row in 0..<result.rowCount {
            guard let topic = result.string(row, "topic"), let partition = result.int(row, "partition"), let offset = result.int(row, "next_offset") else { continue }
            let key = TopicPartition(topic, Int32(partition))
            if wanted.contains(key) { positions[key] = offset }
        }
        return positions
    }
}
