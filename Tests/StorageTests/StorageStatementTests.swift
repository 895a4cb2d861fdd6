import Foundation
import Postgres
import Analytics
import Storage
import Testing
import TestSupport

/// Each of Storage's statements against a freshly migrated database: it
/// runs, and it does what its name says (positions only forward, a nonce
/// keeps its first owner, a bounded delete deletes no more than its limit).
@Suite(.enabled(if: Services.available, Services.skipMessage), .serialized)
struct StorageStatementTests: MigratedDatabaseSuite {
    let migrated: MigratedDatabase

    func count(_ sql: String, _ parameters: [PostgresValue] = []) throws -> Int {
        Int(try connection.execute(sql, parameters).int(0, "count") ?? -1)
    }

    func resultRow(_ id: String, tenant: String = "t1", verdict: String = "verified", verifiedAt: Date = Date(), testKind: String? = nil,
                   elementGroups: [ElementGroupsColumn.Group] = [], deviceAuth: String? = nil, deviceReader: String? = nil) -> ResultsTable.Row {
        ResultsTable.Row(eventID: id, tenant: tenant, flow: "apple-wallet-app", verdict: verdict, reasonCodes: [], docType: "org.iso.18013.5.1.mDL",
                         issuerSubject: "CN=issuer", issuerCountry: "US", msoSigned: nil, msoValidFrom: nil, msoValidUntil: nil, eventTime: nil,
                         receivedAt: verifiedAt, verifiedAt: verifiedAt, processingSeconds: 0.01, sourceTopic: "veridoc.requests",
                         sourcePartition: 0, sourceOffset: 1, assurance: verdict.hasPrefix("test_") ? "test" : "production", testKind: testKind,
                         elementGroups: ElementGroupsColumn.Value(elementGroups), deviceAuth: deviceAuth, deviceReader: deviceReader)
    }

    /// Analytics count outcomes by how the device authenticated (migration 13),
    /// and the table refuses a MAC without its reader or a signature with one.
    @Test func deviceAuthenticationIsCountedAndConstrained() throws {
        let now = Date()
        try connection.execute(ResultsTable.insertNew([
            resultRow("d1", tenant: "dev", verifiedAt: now, deviceAuth: "signature"),
            resultRow("d2", tenant: "dev", verifiedAt: now, deviceAuth: "mac", deviceReader: "reader-1"),
            resultRow("d3", tenant: "dev", verifiedAt: now, deviceAuth: "mac", deviceReader: "reader-1"),
            resultRow("d4", tenant: "dev", verdict: "rejected", verifiedAt: now),
        ]))
        let snapshot = try AnalyticsSnapshot.load(since: now.addingTimeInterval(-3600), tenant: "dev", on: connection)
        #expect(snapshot.deviceAuthentication.map { "\($0.method) \($0.reader) \($0.count)" } == ["mac reader-1 2", "signature - 1"])
        let stats = StatsTable.render(snapshot).split(separator: "\n")
        #expect(stats.contains { $0.contains(" mac ") && $0.contains("reader-1") && $0.hasSuffix(" <5") }, "\(stats)")
        for (id, auth, reader) in [("x1", "mac", nil), ("x2", "signature", "reader-1"), ("x3", "password", nil)] as [(String, String, String?)] {
            #expect(throws: PostgresError.self, "\(auth) \(reader ?? "no reader")") {
                try self.connection.execute(ResultsTable.insertNew([self.resultRow(id, tenant: "dev", deviceAuth: auth, deviceReader: reader)]))
            }
        }
    }

    /// The groups a result row carries read back through the views
    /// `element_groups` and `elements` exactly as written: names that JSON
    /// must escape, a retention limit and none, an instant with microseconds,
    /// "never", and no instant. A result without elements has no rows there.
    @Test func elementGroupsReadBackThroughTheViewsAsWritten() throws {
        let until = Date(timeIntervalSince1970: 1_900_000_000.123456)
        let groups: [ElementGroupsColumn.Group] = [
            .init(namespace: "org.iso.18013.5.1", elements: ["family_name", "quote\"back\\slash", "line\nbreak\u{1}", "ünï 🪪"], requested: true,
                  retention: .mayStore(days: 30), source: "request", capped: false, retainUntil: .at(until)),
            .init(namespace: "ns \"two\"", elements: ["portrait"], requested: false, retention: .willNotStore, source: "not-requested",
                  capped: false, retainUntil: nil),
            .init(namespace: "org.iso.18013.5.1", elements: ["age_over_21"], requested: true, retention: .mayStore(days: nil),
                  source: "tenant-default", capped: true, retainUntil: .never),
        ]
        try connection.execute(ResultsTable.insertNew([resultRow("a", elementGroups: groups), resultRow("b")]))
        let read = try connection.execute("""
            SELECT namespace, array_to_json(elements)::text AS names, requested, retention_intent, retention_days, retention_source,
                   retention_capped, retain_until::text AS until, (retain_until = $1) AS exact
            FROM element_groups WHERE event_id = 'a' ORDER BY retention_days NULLS LAST, retention_capped, namespace
            """, [.timestamp(until)])
        #expect(read.rowCount == groups.count)
        for (row, group) in groups.enumerated() {
            #expect(read.string(row, "namespace") == group.namespace)
            let stored = try JSONSerialization.jsonObject(with: Data((read.string(row, "names") ?? "").utf8)) as? [String]
            #expect(stored == group.elements)
            #expect(read.bool(row, "requested") == group.requested)
            let (intent, days): (String, Int?) = switch group.retention {
            case .willNotStore: ("willNotStore", nil)
            case .mayStore(let days): ("mayStore", days)
            }
            #expect(read.string(row, "retention_intent") == intent)
            #expect(read.int(row, "retention_days").map(Int.init) == days)
            #expect(read.string(row, "retention_source") == group.source)
            #expect(read.bool(row, "retention_capped") == group.capped)
        }
        #expect(read.bool(0, "exact") == true)
        #expect(read.string(1, "until") == nil)
        #expect(read.string(2, "until") == "infinity")
        #expect(try count("SELECT count(*) AS count FROM elements WHERE event_id = 'a'") == 6)
        #expect(try count("SELECT count(*) AS count FROM elements WHERE event_id = 'a' AND element = $1 AND requested",
                          [.text("quote\"back\\slash")]) == 1)
        #expect(try count("SELECT count(*) AS count FROM element_groups WHERE event_id = 'b'") == 0)
        #expect(try connection.execute("SELECT element_groups IS NULL AS none FROM results WHERE event_id = 'b'").bool(0, "none") == true)
    }

    @Test func migrationsApplyEachVersionOnceInOrder() throws {
        let versions = Migrations.all.map(\.version)
        #expect(versions == Array(1...versions.count))
        let fresh = try TestDatabase()
        let other = try fresh.connect()
        defer { other.close() }
        #expect(try Migrations.apply(on: other) == versions)
        #expect(try Migrations.apply(on: other) == [])
        #expect(Int(try other.execute("SELECT count(*) AS count FROM schema_migrations").int(0, "count") ?? 0) == versions.count)
    }

    @Test func aResultIsInsertedOnceAndAReplayRewritesItsVerdict() throws {
        let first = try connection.execute(ResultsTable.insertNew([resultRow("a"), resultRow("b")]))
        #expect(Set((0..<first.rowCount).compactMap { first.string($0, "event_id") }) == ["a", "b"])
        let again = try connection.execute(ResultsTable.insertNew([resultRow("a"), resultRow("c")]))
        #expect((0..<again.rowCount).compactMap { again.string($0, "event_id") } == ["c"])

        try connection.execute(ResultsTable.recordReplay(eventID: "a", verdict: "rejected", reasonCodes: ["request.nonce_reused"]))
        let row = try connection.execute("SELECT verdict, array_to_string(reason_codes, ',') AS reasons FROM results WHERE event_id = 'a'")
        #expect(row.string(0, "verdict") == "rejected")
        #expect(row.string(0, "reasons") == "request.nonce_reused")
        #expect(try count("SELECT count(*) AS count FROM results WHERE verdict = 'verified'") == 2)
    }

    @Test func aNonceKeepsItsFirstOwner() throws {
        let hash: [UInt8] = [0x00, 0xff, 0x10, 0x7f]
        let first = [NoncesTable.Use(tenant: "t1", hash: hash, eventID: "a")]
        let claimed = try connection.execute(NoncesTable.claim(first, at: Date(), returningClaims: true))
        #expect(claimed.rowCount == 1)
        #expect(claimed.bytes(0, "nonce_hash") == hash)
        let replay = [NoncesTable.Use(tenant: "t1", hash: hash, eventID: "b"), NoncesTable.Use(tenant: "t2", hash: hash, eventID: "c")]
        let second = try connection.execute(NoncesTable.claim(replay, at: Date(), returningClaims: true))
        #expect((0..<second.rowCount).compactMap { second.string($0, "event_id") } == ["c"], "the same hash is a different nonce in another tenant")
        let owners = try connection.execute(NoncesTable.owners(of: replay))
        let byTenant = Dictionary(uniqueKeysWithValues: (0..<owners.rowCount).map { (owners.string($0, "tenant")!, owners.string($0, "event_id")!) })
        #expect(byTenant == ["t1": "a", "t2": "c"])
    }

    @Test func positionsMoveForwardExceptPastATruncation() throws {
        func position() throws -> Int64? {
            let rows = try connection.execute(ConsumerPositionsTable.read(group: "g", topics: ["veridoc.requests"]))
            return rows.rowCount == 1 ? rows.int(0, "next_offset") : nil
        }
        let at = { (offset: Int64) -> ConsumerPositionsTable.Position in (topic: "veridoc.requests", partition: 3, nextOffset: offset) }
        try connection.execute(ConsumerPositionsTable.advance(group: "g", to: [at(10)]))
        try connection.execute(ConsumerPositionsTable.advance(group: "g", to: [at(5)]))
        #expect(try position() == 10)
        try connection.execute(ConsumerPositionsTable.moveBack(group: "g", topic: "veridoc.requests", partition: 3, to: 7))
        #expect(try position() == 7)
        try connection.execute(ConsumerPositionsTable.moveBack(group: "g", topic: "veridoc.requests", partition: 3, to: 9))
        #expect(try position() == 7, "moving back never moves forward")
        let otherGroup = try connection.execute(ConsumerPositionsTable.read(group: "h", topics: ["veridoc.requests"]))
        #expect(otherGroup.rowCount == 0)
    }

    @Test func aGapIsRecordedOnce() throws {
        for _ in 0..<2 {
            try connection.execute(ConsumerGapsTable.insert(group: "g", topic: "veridoc.requests", partition: 0, from: 5, to: 9, kind: "deleted",
                                                            skippedOffsets: 4, policy: "skip", workerID: "w1"))
        }
        #expect(try count("SELECT count(*) AS count FROM consumer_gaps WHERE skipped_offsets = 4") == 1)
        try connection.execute(HealthProbe.statement)
    }

    @Test func theOutboxClaimsDeliversAndStrips() throws {
        try connection.execute(ResultsTable.insertNew([resultRow("e1", tenant: "t1"), resultRow("e2", tenant: "t2")]))
        let payload = #"{"id":"o1","data":{"verdict":"verified","claims":{"sealed":"x"}}}"#
        let rows = [OutboxTable.Row(id: "o1", eventID: "e1", key: [1, 2], payload: payload, hasClaims: true),
                    OutboxTable.Row(id: "o2", eventID: "e2", key: nil, payload: #"{"id":"o2","data":{}}"#, hasClaims: false)]
        try connection.execute(OutboxTable.insert([rows[0]], claimedBy: "w1", until: Date().addingTimeInterval(-1)))
        try connection.execute(OutboxTable.insert([rows[1]], claimedBy: "w1", until: Date().addingTimeInterval(600)))
        // An outcome already there is a writer's bug, not a redelivery: refused, and the rows there keep their claims.
        let again = #expect(throws: PostgresError.self) { try connection.execute(OutboxTable.insert(rows, claimedBy: "w9", until: Date())) }
        #expect(again?.sqlState == "23505")
        #expect(Int(try connection.execute(OutboxTable.countUnpublished).int(0, "count") ?? 0) == 2)

        let swept = try connection.execute(OutboxTable.claimExpired(by: "w2", forSeconds: 60))
        #expect((0..<swept.rowCount).compactMap { swept.string($0, "id") } == ["o1"], "a live claim is left to its owner")
        #expect(swept.bytes(0, "kafka_key") == [1, 2])
        #expect(try connection.execute(OutboxTable.claimExpired(by: "w3", forSeconds: 60)).rowCount == 0)

        #expect(try connection.execute(OutboxTable.stripClaims(matching: .tenant("t2"), limit: 10)).affectedRows == 0)
        #expect(try connection.execute(OutboxTable.stripClaims(matching: .tenant("t1"), limit: 10)).affectedRows == 1)
        let stripped = try connection.execute("SELECT payload, has_claims FROM outbox WHERE id = 'o1'")
        #expect(stripped.bool(0, "has_claims") == false)
        #expect(stripped.string(0, "payload")?.contains("claims") == false)
        #expect(stripped.string(0, "payload")?.contains("verified") == true)

        let hostile = OutboxTable.Row(id: "o3", eventID: "e1", key: nil, payload: #"{"id":"o3\u0000","data":{"claims":{"sealed":"x"}}}"#, hasClaims: true)
        try connection.execute(OutboxTable.insertUnclaimed([hostile]))
        #expect(try connection.execute(OutboxTable.stripClaims(matching: .request(eventID: "e1"), limit: 10)).affectedRows == 1,
                "an outcome holding the escape \\u0000 (which jsonb refuses) is stripped too")
        try connection.execute(OutboxTable.deleteDelivered(ids: ["o3"]))

        try connection.execute(OutboxTable.deleteDelivered(ids: ["o2"]))
        #expect(Int(try connection.execute(OutboxTable.countUnpublished).int(0, "count") ?? 0) == 1)
        try connection.execute("UPDATE outbox SET published_at = now()")
        #expect(try connection.execute(OutboxTable.deletePublished(limit: 10)).affectedRows == 1)
    }

    @Test func valuesExpireEraseAndResealInBoundedSteps() throws {
        let now = Date()
        let past = now.addingTimeInterval(-7200), later = now.addingTimeInterval(86_400 * 3)
        try ValuePartitions().ensure(covering: [past, later], now: now, on: connection)
        func value(_ id: String, tenant: String, element: String, until: Date, key: String = "k1") -> ElementValuesTable.Row {
            ElementValuesTable.Row(eventID: id, tenant: tenant, namespace: "org.iso.18013.5.1", element: element, keyID: key, nonce: [1],
                                   ciphertext: [2, 3], retainUntil: .at(until), storedAt: now)
        }
        let rows = [value("e1", tenant: "t1", element: "a", until: past), value("e1", tenant: "t1", element: "b", until: past),
                    value("e1", tenant: "t1", element: "c", until: later), value("e2", tenant: "t2", element: "a", until: later, key: "old")]
        try connection.execute(ElementValuesTable.insert(rows))
        let again = #expect(throws: PostgresError.self) { try connection.execute(ElementValuesTable.insert(rows)) }
        #expect(again?.sqlState == "23505")
        #expect(try count("SELECT count(*) AS count FROM element_values") == 4, "values are never stored twice")

        let overdue = try connection.execute(ElementValuesTable.oldestOverdue(at: now)).double(0, "age") ?? 0
        #expect(abs(overdue - 7200) < 5)
        #expect(try connection.execute(ElementValuesTable.deleteExpired(at: now, limit: 1)).affectedRows == 1)
        #expect(try connection.execute(ElementValuesTable.deleteExpired(at: now, limit: 10)).affectedRows == 1)
        #expect(try connection.execute(ElementValuesTable.oldestOverdue(at: now)).double(0, "age") == 0)

        #expect(Int(try connection.execute(ElementValuesTable.countSealed(underNoneOf: ["k1"])).int(0, "count") ?? 0) == 1)
        let sealed = try connection.execute(ElementValuesTable.sealed(underAnyOf: ["old"], limit: 10))
        #expect(sealed.rowCount == 1)
        let reseal = { (fromKey: String) in
            ElementValuesTable.reseal(eventID: "e2", namespace: "org.iso.18013.5.1", element: "a", retainUntil: sealed.string(0, "retain_until")!,
                                      fromKey: fromKey, keyID: "k1", nonce: [9], ciphertext: [8])
        }
        #expect(try connection.execute(reseal("elsewhere")).affectedRows == 0, "a row whose key changed meanwhile is left alone")
        #expect(try connection.execute(reseal("old")).affectedRows == 1)
        #expect(Int(try connection.execute(ElementValuesTable.countSealed(underNoneOf: ["k1"])).int(0, "count") ?? 0) == 0)

        try connection.execute(ResultsTable.insertNew([resultRow("e2", tenant: "t2")]))
        #expect(try connection.execute(ElementValuesTable.delete(matching: .tenant("t2"), limit: 10)).affectedRows == 1)
        #expect(try connection.execute(ElementValuesTable.delete(matching: .request(eventID: "e1"), limit: 10)).affectedRows == 1)
        #expect(Int(try connection.execute(ResultsTable.count(matching: .tenant("t2"))).int(0, "count") ?? 0) == 1)
    }

    @Test func partitionsAreCreatedListedAndDropped() throws {
        let now = Date()
        let partitions = ValuePartitions()
        try partitions.ensure(covering: [now.addingTimeInterval(-86_400 * 2), now], now: now, on: connection)
        let listed = try ValuePartitions.list(on: connection)
        #expect(listed.count == 2)
        let expired = try #require(listed.first { $0.partition.upper <= now })
        try connection.execute(ElementValuesTable.insert([.init(eventID: "e", tenant: "t", namespace: "n", element: "x", keyID: "k", nonce: [1],
                                                                ciphertext: [1], retainUntil: .at(expired.partition.lower), storedAt: now)]))
        #expect(try ValuePartitions.drop(expired.partition, detachPending: false, on: connection) == 1)
        #expect(try ValuePartitions.list(on: connection).count == 1)
    }

    @Test func analyticsCountWhatTheResultsHold() throws {
        let now = Date()
        try connection.execute(ResultsTable.insertNew([resultRow("v1", tenant: "t1", verifiedAt: now), resultRow("v2", tenant: "t1", verifiedAt: now),
                                                       resultRow("r1", tenant: "t2", verdict: "rejected", verifiedAt: now)]))
        let all = try AnalyticsSnapshot.load(since: now.addingTimeInterval(-3600), tenant: nil, on: connection)
        #expect(all.outcomes.map(\.count).reduce(0, +) == 3)
        #expect(all.hours.map(\.verified).reduce(0, +) == 2)
        #expect(all.hours.map(\.rejected).reduce(0, +) == 1)
        let one = try AnalyticsSnapshot.load(since: now.addingTimeInterval(-3600), tenant: "t2", on: connection)
        #expect(one.outcomes.map(\.verdict) == ["rejected"])
        #expect(one.latency.map(\.count) == [1])
    }

    /// A test tenant's outcomes are kept apart: production analytics never
    /// count them, `--assurance test` shows only them, and the table refuses
    /// a test verdict marked production (or the reverse).
    @Test func testOutcomesAreKeptApartFromProduction() throws {
        let now = Date()
        try connection.execute(ResultsTable.insertNew([
            resultRow("p1", tenant: "prod", verifiedAt: now),
            resultRow("s1", tenant: "sandbox", verdict: "test_verified", verifiedAt: now, testKind: "simulator"),
            resultRow("s2", tenant: "sandbox", verdict: "test_rejected", verifiedAt: now),
        ]))
        let since = now.addingTimeInterval(-3600)
        let production = try AnalyticsSnapshot.load(since: since, tenant: nil, on: connection)
        #expect(production.outcomes.map(\.tenant) == ["prod"] && production.latency.map(\.tenant) == ["prod"])
        #expect(production.hours.map(\.verified).reduce(0, +) == 1 && production.reasons.map(\.tenant) == ["prod"])
        let test = try AnalyticsSnapshot.load(since: since, tenant: nil, assurance: .test, on: connection)
        #expect(Set(test.outcomes.map(\.verdict)) == ["test_verified", "test_rejected"])
        #expect(test.hours.map(\.verified).reduce(0, +) == 1 && test.hours.map(\.rejected).reduce(0, +) == 1)
        #expect(try AnalyticsSnapshot.load(since: since, tenant: nil, assurance: .all, on: connection).outcomes.count == 3)
        var forged = resultRow("f1", tenant: "sandbox", verdict: "verified", testKind: "simulator")
        #expect(throws: PostgresError.self) { try self.connection.execute(ResultsTable.insertNew([forged])) }
        forged = resultRow("f2", tenant: "sandbox", verdict: "test_verified")
        forged.assurance = "production"
        #expect(throws: PostgresError.self) { try self.connection.execute(ResultsTable.insertNew([forged])) }
    }
}
