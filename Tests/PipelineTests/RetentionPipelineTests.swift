import CBOR
import DocumentTypes
import Crypto
import Foundation
import Kafka
import Postgres
import Storage
import Retention
import Analytics
import Testing
import TestIssuer
import Verification
import TestSupport

/// Retention end to end, with the real worker binary, broker process and
/// PostgreSQL: planted values never reach a database dump (willNotStore,
/// not-requested) or reach it only encrypted (mayStore) and vanish after
/// purge or forget; the outcome topic carries no clear value, and sealed
/// claims open with the integration's key; `stats` and `report` agree with
/// counts computed here from the events produced.
///
/// Time is moved with `veridoc purge --now`, not by editing retain_until.
///
/// Nested in `PipelineTests` so that its serialization covers these tests
/// too: they start worker and broker processes on a two-core machine.
extension PipelineTests {
    @Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
    struct RetentionPipelineTests {
        static let ns = TestIssuer.Credential.mDLNameSpace
        static let family = "Zyxwvutsrq-PLANTED-FAMILY"     // requested willNotStore
        static let given = "Qwertyuiop-PLANTED-GIVEN"       // requested mayStore 1 day
        static let notAsked = "Mnbvcxzlkj-PLANTED-NOTASKED"  // disclosed, not requested (document_number)
        static let issueDate = "issue_date"                 // requested mayStore unlimited → capped to 30 days

        @Test func plantedValuesLeakNowhereExpireAndAreCountedHonestly() throws {
            let fixture = try PipelineFixture()
            fixture.factory.credential[Self.ns, "family_name"] = .text(Self.family)
            fixture.factory.credential[Self.ns, "given_name"] = .text(Self.given)
            fixture.factory.credential[Self.ns, "document_number"] = .text(Self.notAsked)
            let recipient = try PrivateKey.generate(curve: .p256)
            try configureRetention(fixture, recipient: recipient.publicKey)

            // The mix stats must reproduce: (flow, fault?) × count; 1–4 must show as "<5".
            let plan: [(Flow, TestIssuer.Fault?, Int)] = [
                (.appleWalletApp, nil, 7), (.isoDeviceResponse, nil, 5), (.appleWalletWeb, nil, 2),
                (.appleWalletApp, .msoExpired, 3), (.isoDeviceResponse, .untrustedIssuer, 6),
            ]
            var options = TestIssuer.EventOptions()
            options.requestedElements = [
                RequestedElement(namespace: Self.ns, element: "family_name", retention: .willNotStore),
                RequestedElement(namespace: Self.ns, element: "given_name", retention: .mayStore(days: 1)),
                RequestedElement(namespace: Self.ns, element: Self.issueDate, retention: .mayStore(days: nil)),
            ]
            var events: [TestIssuer.GeneratedEvent] = []
            for (flow, fault, count) in plan {
                for _ in 0..<count { events.append(try fixture.factory.event(flow, options: options, fault: fault)) }
            }
            let verifiedIDs = events.filter { $0.expectedReasons.isEmpty }.compactMap(\.id)
            let worker = try fixture.startWorker()
            try fixture.produce(records(events))
            #expect(try eventually(90) { try fixture.database.count("SELECT count(*) AS count FROM results") >= events.count }, "\(worker.log.suffix(2000))")
            #expect(try eventually(30) { try fixture.database.count("SELECT count(*) AS count FROM outbox WHERE published_at IS NULL") == 0 })
            let outcomes = try readOutcomes(fixture, expected: events.count)
            #expect(outcomes.count == events.count)
            let database = try fixture.database.connect()
            defer { database.close() }

            // Metadata: names and decisions for every requested element; one the holder
            // disclosed without being asked (document_number) leaves no trace (data minimisation).
            #expect(try fixture.database.count("SELECT count(*) AS count FROM elements WHERE element = 'document_number'") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM elements WHERE NOT requested") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM elements WHERE element = 'family_name'") == events.count)
            #expect(try fixture.database.count("""
                SELECT count(*) AS count FROM elements e JOIN results r USING (event_id)
                WHERE e.element = 'given_name' AND e.retention_source = 'request' AND r.verdict = 'verified'
                  AND abs(EXTRACT(EPOCH FROM e.retain_until - (r.verified_at + interval '1 day'))) < 0.001
                """) == verifiedIDs.count)
            #expect(try fixture.database.count("""
                SELECT count(*) AS count FROM elements e JOIN results r USING (event_id)
                WHERE e.element = 'issue_date' AND e.retention_capped AND e.retention_days = 30 AND r.verdict = 'verified'
                  AND abs(EXTRACT(EPOCH FROM e.retain_until - (r.verified_at + interval '30 days'))) < 0.001
                """) == verifiedIDs.count)
            // Values: only mayStore elements of verified results, encrypted under k1.
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values") == 2 * verifiedIDs.count)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE key_id = 'k1' AND element IN ('given_name', 'issue_date')") == 2 * verifiedIDs.count)
            let givenCiphertexts = try database.execute("SELECT encode(ciphertext, 'hex') AS hex FROM element_values WHERE element = 'given_name'")
            let givenHex = (0..<givenCiphertexts.rowCount).compactMap { givenCiphertexts.string($0, "hex") }
            #expect(givenHex.count == verifiedIDs.count)

            let dump = try pgDump(fixture.database.connectionString)
            #expect(dump.contains("element_values_unlimited") && !givenHex.isEmpty && dump.contains(givenHex[0]), "the dump has the encrypted rows")
            for planted in [Self.family, Self.given, Self.notAsked] {
                for form in Self.forms(of: planted) { #expect(!dump.contains(form), "\(planted) appears in the dump as \(form)") }
            }
            for outcome in outcomes {
                for planted in [Self.family, Self.given, Self.notAsked] {
                    for form in Self.forms(of: planted) { #expect(!outcome.raw.contains(form), "\(planted) appears on the outcome topic") }
                }
            }
            for planted in [Self.family, Self.given, Self.notAsked] { #expect(!worker.log.contains(planted)) }

            // Sealed claims: verified outcomes only; they open with the recipient's key to the
            // values requested, whatever the intent (willNotStore: the business does not keep
            // it, but sees it), never to a value disclosed without being asked for.
            // Once delivered, no outbox row holds them, sealed or not.
            #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM outbox WHERE has_claims") == 0 },
                    "delivered outcomes leave no sealed claims in the outbox")
            for outcome in outcomes {
                let data = outcome.object["data"] as? [String: Any] ?? [:]
                let claims = data["claims"] as? [String: Any]
                guard verifiedIDs.contains(outcome.subject) else { #expect(claims == nil); continue }
                guard let claims else { Issue.record("verified outcome \(outcome.subject) has no claims"); continue }
                let plain = try OutcomeClaims.open(claims, requestID: outcome.subject, recipient: recipient)
                let text = String(decoding: plain, as: UTF8.self)
                #expect(text.contains(Self.given) && text.contains(Self.family) && !text.contains(Self.notAsked))
                #expect(throws: (any Error).self) { try OutcomeClaims.open(claims, requestID: "another-request", recipient: recipient) }
            }

            // stats and report against counts computed from the plan.
            var byVerdict: [String: Int] = [:]  // "flow verdict" → count
            var byReason: [String: Int] = [:]   // "flow reason" → count
            for event in events {
                let verdict = event.expectedReasons.isEmpty ? "verified" : "rejected"
                byVerdict["\(event.flow.rawValue) \(verdict)", default: 0] += 1
                for reason in event.expectedReasons.isEmpty ? ["none"] : event.expectedReasons.map(\.rawValue) {
                    byReason["\(event.flow.rawValue) \(reason)", default: 0] += 1
                }
            }
            let stats = try veridoc(["stats", "--config", fixture.config.path, "--since", "2h"])
            #expect(stats.status == 0, "\(stats.output)")
            let lines = stats.output.components(separatedBy: "\n").map { $0.split(separator: " ").map(String.init) }
            let outcomeLines = lines.filter { $0.count == 6 && ["verified", "rejected"].contains($0[4]) }
            #expect(outcomeLines.count == byVerdict.count, "\(stats.output)")
            for (key, count) in byVerdict {
                let parts = key.split(separator: " ").map(String.init)
                #expect(outcomeLines.contains { $0[0] == "acme" && $0[1] == parts[0] && $0[4] == parts[1] && $0[5] == Suppression.display(count) },
                        "stats lacks \(key) \(Suppression.display(count)):\n\(stats.output)")
            }
            let reasonLines = lines.filter { $0.count == 4 && $0[0] == "acme" }
            #expect(reasonLines.count == byReason.count, "\(stats.output)")
            for (key, count) in byReason {
                let parts = key.split(separator: " ").map(String.init)
                #expect(reasonLines.contains { $0[1] == parts[0] && $0[2] == parts[1] && $0[3] == Suppression.display(count) }, "stats lacks \(key)")
            }
            #expect(stats.output.contains("<5"))

            let reportFile = fixture.directory.appendingPathComponent("report.html")
            let report = try veridoc(["report", "--config", fixture.config.path, "--html", reportFile.path, "--since", "2h"])
            #expect(report.status == 0, "\(report.output)")
            let html = try String(contentsOf: reportFile, encoding: .utf8)
            #expect(html.contains("<svg") && !html.contains("<script") && !html.contains("src="))
            for (key, count) in byReason {
                let parts = key.split(separator: " ").map(String.init)
                let row = "<tr><td>acme</td><td>\(parts[0])</td><td>\(parts[1])</td><td class=\"n\">\(ReportHTML.escape(Suppression.display(count)))</td></tr>"
                #expect(html.contains(row), "report lacks \(row)")
            }
            // The headline counts every event; each rejection reason is explained.
            #expect(html.contains("id=\"figure-events\"><span class=\"value\">\(ReportHTML.escape(Suppression.display(events.count)))</span>"))
            for key in byReason.keys where !key.hasSuffix(" none") {
                let reason = String(key.split(separator: " ")[1])
                #expect(html.contains("<tr><td><code>\(reason)</code></td>") && ReasonGlossary.shared.meaningHTML(reason) != nil, "\(reason) unexplained")
            }
            for planted in [Self.family, Self.given, Self.notAsked] { #expect(!html.contains(planted) && !stats.output.contains(planted)) }

            // forget --request: that person's values go, the outcome facts stay.
            let forgotten = verifiedIDs[0]
            let forget = try veridoc(["forget", "--config", fixture.config.path, "--request", forgotten])
            #expect(forget.status == 0 && forget.output.contains("erased 2 values"), "\(forget.output)")
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE event_id = '\(forgotten)'") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM results WHERE event_id = '\(forgotten)'") == 1)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values") == 2 * (verifiedIDs.count - 1))

            // One day and a minute later: every given_name (1 day) expired, issue_date (30 days) not.
            let later = Date().addingTimeInterval(86_400 + 60)
            let purge = try veridoc(["purge", "--config", fixture.config.path, "--now", RFC3339String(later)])
            #expect(purge.status == 0, "\(purge.output)")
            #expect(purge.output.contains("purged \(verifiedIDs.count - 1) values"), "\(purge.output)")
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE element = 'given_name'") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE element = 'issue_date'") == verifiedIDs.count - 1)
            let afterPurge = try pgDump(fixture.database.connectionString)
            for hex in givenHex { #expect(!afterPurge.contains(hex), "an expired value's ciphertext survived the purge") }
            for form in Self.forms(of: Self.given) { #expect(!afterPurge.contains(form)) }

            // forget --tenant: every remaining value of the tenant; results stay.
            let forgetTenant = try veridoc(["forget", "--config", fixture.config.path, "--tenant", "acme"])
            #expect(forgetTenant.status == 0 && forgetTenant.output.contains("erased \(verifiedIDs.count - 1) values"), "\(forgetTenant.output)")
            #expect(forgetTenant.output.contains("kept \(events.count) results"))
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM results") == events.count)

            // Delivered outcomes are gone from the outbox, sealed claims and all; a row an
            // earlier version marked published and kept is removed by the purge.
            #expect(try fixture.database.count("SELECT count(*) AS count FROM outbox") == 0, "delivered outcomes leave the outbox")
            _ = try database.execute("""
                INSERT INTO outbox (id, event_id, payload, published_at, has_claims)
                VALUES ('legacy-outcome', 'legacy-request', '{"data":{"claims":{"enc":"AA=="}}}', now() - interval '1 day', true)
                """)
            // A session of serve's that expired (retention.sessionKeepSeconds after it, the purge removes it).
            _ = try database.execute("""
                INSERT INTO sessions (tenant, id, flow, audience, doc_type, requested, nonce, created_at, expires_at)
                VALUES ('acme', gen_random_uuid(), 'iso-device-response', '', 'org.iso.18013.5.1.mDL', '[]', '\\x01', now(), now() + interval '5 minutes')
                """)

            // Far ahead: whole partitions are dropped, not deleted row by row.
            let far = try veridoc(["purge", "--config", fixture.config.path, "--now", RFC3339String(Date().addingTimeInterval(40 * 86_400))])
            #expect(far.status == 0 && !far.output.contains("(0 partitions dropped)"), "\(far.output)")
            #expect(far.output.contains("removed 1 published outcomes from the outbox and 1 expired sessions"), "\(far.output)")
            #expect(try fixture.database.count("SELECT count(*) AS count FROM sessions") == 0)
            #expect(try fixture.database.count("SELECT count(*) AS count FROM outbox") == 0, "the kept published row was removed")
            #expect(worker.terminate() == 0)
        }

        /// A running worker's purge loop removes expired values by itself, and
        /// `keys rotate-data-key` re-encrypts what is kept under the new active key.
        @Test func purgeLoopAndKeyRotation() throws {
            let fixture = try PipelineFixture()
            try configureRetention(fixture, recipient: nil, purgeIntervalSeconds: 1)
            var options = TestIssuer.EventOptions()
            options.requestedElements = [RequestedElement(namespace: Self.ns, element: "given_name", retention: .mayStore(days: 5))]
            let events = try (0..<6).map { _ in try fixture.factory.event(.isoDeviceResponse, options: options) }
            let worker = try fixture.startWorker()
            try fixture.produce(records(events))
            #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM element_values") == events.count }, "\(worker.log.suffix(1500))")
            // Back-date three rows' expiry into the past (same partition bounds do not matter for the DELETE path).
            let connection = try fixture.database.connect()
            defer { connection.close() }
            try connection.executeScript("""
                CREATE TABLE IF NOT EXISTS element_values_d20000101_20000102 PARTITION OF element_values FOR VALUES FROM ('2000-01-01') TO ('2000-01-02');
                INSERT INTO element_values SELECT event_id, tenant, namespace, element, key_id, nonce, ciphertext, '2000-01-01 12:00+00', stored_at
                  FROM element_values WHERE event_id IN (SELECT event_id FROM element_values ORDER BY event_id LIMIT 3);
                """)
            #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE retain_until < now()") == 0 },
                    "the purge loop removed the overdue rows: \(worker.log.suffix(1500))")
            #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values") == events.count)
            // The pass's log line can reach the log's reader after its DELETE reached the database.
            #expect(try eventually(60) { worker.log.contains("purge pass") })
            #expect(worker.terminate() == 0)

            // Rotation: add k2 as active; every row moves to k2 and still opens.
            try DataKeyRing.generateKeyFile(fixture.directory.appendingPathComponent("data-k2.key"))
            var root = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as! [String: Any]
            root["retention"] = ["dataKeys": [["id": "k1", "file": "data-k1.key"], ["id": "k2", "file": "data-k2.key"]], "activeKey": "k2"]
            try JSONSerialization.data(withJSONObject: root).write(to: fixture.config)
            let rotate = try veridoc(["keys", "rotate-data-key", "--config", fixture.config.path])
            #expect(rotate.status == 0 && rotate.output.contains("re-encrypted \(events.count) values"), "\(rotate.output)")
            let keys = try RetentionConfiguration.load(from: fixture.config).keys!
            let rows = try connection.execute("SELECT event_id, namespace, element, key_id, nonce, ciphertext FROM element_values")
            for row in 0..<rows.rowCount {
                #expect(rows.string(row, "key_id") == "k2")
                let sealed = SealedValue(keyID: rows.string(row, "key_id")!, nonce: rows.bytes(row, "nonce")!, ciphertext: rows.bytes(row, "ciphertext")!)
                let plain = try ValueCipher.open(sealed, eventID: rows.string(row, "event_id")!, namespace: rows.string(row, "namespace")!,
                                                 element: rows.string(row, "element")!, keys: keys)
                #expect(!plain.isEmpty)
            }
        }

        /// Every catalogued docType through the real worker: a document with
        /// every element the catalogue lists verifies with each element typed,
        /// the age check is answered, the results keep one value (mayStore)
        /// encrypted and the willNotStore one nowhere (in any encoding), and the
        /// integration's sealed claims hold both.
        @Test func everyCataloguedDocTypeThroughTheWorker() throws {
            let fixture = try PipelineFixture()
            let recipient = try PrivateKey.generate(curve: .p256)
            try configureRetention(fixture, recipient: recipient.publicKey)
            struct Planted {
                let event, docType: String
                /// nil for a docType with no two personal text elements (the EU age attestation holds only ages).
                let kept, dropped: (namespace: String, element: String)?
                let keptValue, droppedValue: String
                let answers: Bool
            }
            var events: [TestIssuer.GeneratedEvent] = []
            var planted: [Planted] = []
            var random = TestIssuer.SeededRandom(seed: 44)
            for (index, type) in DocumentCatalogue.shared.documentTypes.enumerated() {
                var credential = TestIssuer.Credential.sample(of: type, now: fixture.factory.now, using: &random)
                let texts = type.namespaces.flatMap { space in
                    space.elements.filter { $0.type == .text && $0.kind == .personal && !$0.identifier.contains("issuing") }
                        .map { (namespace: space.name, element: $0.identifier) }
                }
                let (kept, dropped) = texts.count >= 2 ? (texts[0], texts[1]) : (nil, nil)
                let keptValue = "Kept\(index)-PLANTED-\(UUID().uuidString.prefix(8))"
                let droppedValue = "Dropped\(index)-PLANTED-\(UUID().uuidString.prefix(8))"
                var options = TestIssuer.EventOptions()
                if let kept, let dropped {
                    credential[kept.namespace, kept.element] = .text(keptValue)
                    credential[dropped.namespace, dropped.element] = .text(droppedValue)
                    options.requestedElements = [
                        RequestedElement(namespace: kept.namespace, element: kept.element, retention: .mayStore(days: 7)),
                        RequestedElement(namespace: dropped.namespace, element: dropped.element, retention: .willNotStore),
                    ]
                }
                let answers = credential.nameSpaces.contains { space in
                    space.elements.contains { ["age_over_18", "age_in_years", "birth_date"].contains($0.identifier) }
                }
                fixture.factory.credential = credential
                options.ageRequests = [AgeRequest(age: 18, retention: .willNotStore)]
                let event = try fixture.factory.event(Flow.allCases[index % Flow.allCases.count], options: options)
                events.append(event)
                planted.append(Planted(event: try #require(event.id), docType: type.docType, kept: kept, dropped: dropped,
                                       keptValue: keptValue, droppedValue: droppedValue, answers: answers))
            }
            let worker = try fixture.startWorker()
            try fixture.produce(records(events))
            let outcomes = try readOutcomes(fixture, expected: events.count)
            #expect(outcomes.count == events.count, "\(worker.log.suffix(2000))")
            #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM outbox") == 0 }, "every outcome delivered")
            let dump = try pgDump(fixture.database.connectionString)
            for document in planted {
                let outcome = try #require(outcomes.first { $0.subject == document.event }, "\(document.docType)")
                let data = outcome.object["data"] as? [String: Any] ?? [:]
                #expect(data["verdict"] as? String == "verified", "\(document.docType): \(data["reasons"] ?? "")")
                #expect((data["document"] as? [String: Any])?["docType"] as? String == document.docType)
                let elements = data["elements"] as? [[String: Any]] ?? []
                #expect(!elements.isEmpty && elements.allSatisfy { $0["typed"] as? Bool == true }, "\(document.docType): every element typed")
                let age = (data["ages"] as? [[String: Any]])?.first
                #expect(((age?["answer"] as? Bool) != nil) == document.answers, "\(document.docType): \(age ?? [:]) \(elements.map { $0["element"] as? String ?? "" })")
                let id = document.event
                #expect(try fixture.database.count("SELECT count(*) AS count FROM results WHERE event_id = '\(id)' AND doc_type = '\(document.docType)'") == 1)
                guard let kept = document.kept, let dropped = document.dropped else {
                    #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE event_id = '\(id)'") == 0)
                    continue
                }
                #expect(try fixture.database.count("""
                    SELECT count(*) AS count FROM elements WHERE event_id = '\(id)' AND element = '\(kept.element)'
                      AND retention_intent = 'mayStore' AND retention_days = 7
                    """) == 1, "\(document.docType)")
                #expect(try fixture.database.count("""
                    SELECT count(*) AS count FROM elements WHERE event_id = '\(id)' AND element = '\(dropped.element)'
                      AND retention_intent = 'willNotStore'
                    """) == 1, "\(document.docType)")
                #expect(try fixture.database.count("SELECT count(*) AS count FROM element_values WHERE event_id = '\(id)'") == 1,
                        "\(document.docType): only the mayStore value is kept")
                for value in [document.keptValue, document.droppedValue] {
                    for form in Self.forms(of: value) {
                        #expect(!dump.contains(form) && !outcome.raw.contains(form), "\(document.docType): \(value) leaked as \(form)")
                    }
                }
                let claims = try #require(data["claims"] as? [String: Any], "\(document.docType)")
                let opened = String(decoding: try OutcomeClaims.open(claims, requestID: id, recipient: recipient), as: UTF8.self)
                #expect(opened.contains(document.keptValue) && opened.contains(document.droppedValue), "\(document.docType): both requested values are delivered")
            }
            // Analytics learn which ages were asked, never the answers nor what answered them.
            let mdl = try #require(planted.first { $0.docType == "org.iso.18013.5.1.mDL" })
            let facts = try fixture.database.connect()
            defer { facts.close() }
            let checks = try facts.execute("SELECT array_to_string(age_checks, ',') AS checks FROM results WHERE event_id = '\(mdl.event)'")
            #expect(checks.string(0, "checks") == "18")
            let stats = try veridoc(["stats", "--config", fixture.config.path, "--since", "2h"])
            #expect(stats.status == 0 && stats.output.contains("Age checks"), "\(stats.output)")
            let ageLines = stats.output.components(separatedBy: "\n").filter { $0.contains("org.iso.18013.5.1.mDL") && $0.contains(" 18 ") }
            #expect(ageLines.contains { $0.contains("verified") && $0.hasSuffix("<5") }, "\(stats.output)")
            // …and which elements came back, requested or not, with the retention decided: names only.
            for document in planted {
                guard let kept = document.kept, let dropped = document.dropped else { continue }
                let lines = stats.output.components(separatedBy: "\n").filter { $0.contains(document.docType) }
                #expect(lines.contains { $0.contains(" \(kept.element) ") && $0.contains(" yes ") && $0.contains(" mayStore ") }, "\(stats.output)")
                #expect(lines.contains { $0.contains(" \(dropped.element) ") && $0.contains(" willNotStore ") }, "\(stats.output)")
            }
            #expect(worker.terminate() == 0)
        }

        // MARK: helpers

        /// A data key, the tenant's cap and (optionally) the integration's key, in the fixture's config.
        private func configureRetention(_ fixture: PipelineFixture, recipient: PublicKey?, purgeIntervalSeconds: Int = 3600) throws {
            try DataKeyRing.generateKeyFile(fixture.directory.appendingPathComponent("data-k1.key"))
            var root = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as! [String: Any]
            root["retention"] = ["dataKeys": [["id": "k1", "file": "data-k1.key"]], "activeKey": "k1", "purgeIntervalSeconds": purgeIntervalSeconds]
            var tenants = root["tenants"] as! [[String: Any]]
            tenants[0]["maxRetentionDays"] = 30
            if let recipient {
                try Data(recipient.pem.utf8).write(to: fixture.directory.appendingPathComponent("integration.pem"))
                tenants[0]["outcomeRecipientKey"] = "integration.pem"
            }
            root["tenants"] = tenants
            try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted]).write(to: fixture.config)
        }

        /// The plain text and the forms a careless store would leave: UTF-8 hex (bytea),
        /// base64, and SHA-256 (hex, base64) of the text and of its CBOR encoding.
        static func forms(of value: String) -> [String] {
            let utf8 = Array(value.utf8)
            let cbor = CBOR.text(value).encoded()
            var forms = [value, hexString(utf8), Data(utf8).base64EncodedString(), hexString(cbor), Data(cbor).base64EncodedString()]
            for bytes in [utf8, cbor] {
                let digest = sha256(bytes)
                forms += [hexString(digest), Data(digest).base64EncodedString()]
            }
            return forms
        }

        static func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

        private func pgDump(_ connectionString: String) throws -> String {
            let candidates = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            guard let version = candidates.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }).last else { throw TestFailure("no pg_dump") }
            return try Subprocess.output(URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/pg_dump"), ["--dbname", connectionString])
        }

        private func veridoc(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let result = try Subprocess.run(Binaries.veridoc, arguments, mergingStandardError: true)
            return (result.status, result.output)
        }

        private struct Outcome {
            let raw: String
            let object: [String: Any]
            let subject: String
        }

        /// Every outcome record, raw, de-duplicated by CloudEvent id.
        private func readOutcomes(_ fixture: PipelineFixture, expected: Int) throws -> [Outcome] {
            let consumer = try KafkaConsumer(properties: [
                "bootstrap.servers": fixture.broker.bootstrap, "group.id": "retention-reader-\(UUID().uuidString)", "auto.offset.reset": "earliest",
                "session.timeout.ms": "6000", "fetch.wait.max.ms": "5",
            ], listener: NoStoredOffsets())
            defer { consumer.close() }
            try consumer.subscribe(["veridoc.outcomes"])
            var outcomes: [String: Outcome] = [:]
            let deadline = Date().addingTimeInterval(60)
            while outcomes.count < expected && Date() < deadline {
                guard let message = try consumer.poll(timeoutMilliseconds: 200) else { continue }
                let raw = String(decoding: message.value, as: UTF8.self)
                if let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
                   let id = object["id"] as? String, let subject = object["subject"] as? String {
                    outcomes[id] = Outcome(raw: raw, object: object, subject: subject)
                }
            }
            return Array(outcomes.values)
        }
    }

}

private func RFC3339String(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
}
