import CBOR
import Foundation
@testable import MDoc
import Postgres
import Retention
import Storage
import Testing
import TestSupport
@testable import Verification

/// The `element_groups` rows: every decided element in exactly one row, the
/// row of its namespace and decision, rows in the order of their first
/// element and names in disclosure order — with a few groups (searched in a
/// list) and with many (past the list's limit, in an index).
struct ElementGroupTests {
    static let writer = RetentionWriter(directory: TenantDirectory([]), keys: nil)
    static let verifiedAt = Date(timeIntervalSince1970: 1_800_000_000)

    static func result(disclosing names: [(String, String)], requested: [RequestedElement]) -> VerificationResult {
        let value = try! CBORDecoder().decode([0x01])
        let summary = DocumentSummary(docType: "d", issuerSubject: nil, issuerCountry: nil, signed: nil, validFrom: nil, validUntil: nil,
                                      elements: names.map { DisclosedElement(namespace: $0.0, identifier: $0.1, value: value) })
        return VerificationResult(requestID: "r", tenant: nil, flow: nil, verifiedAt: verifiedAt, eventTime: nil,
                                  report: CheckReport(), documents: [summary], requestedElements: requested, replayToken: nil)
    }

    /// A group as text: namespace, names, requested, intent, days, source, capped, retain_until.
    static func describe(_ group: ElementGroupsColumn.Group) -> String {
        let (intent, days): (String, String) = switch group.retention {
        case .willNotStore: ("willNotStore", "-")
        case .mayStore(let days): ("mayStore", days.map(String.init) ?? "-")
        }
        let until = switch group.retainUntil {
        case nil: "-"
        case .never: "infinity"
        case .at(let date): "\(Int(date.timeIntervalSince(verifiedAt) / 86_400))d"
        }
        return [group.namespace, "[" + group.elements.joined(separator: ",") + "]", group.requested ? "t" : "f", intent, days, group.source,
                group.capped ? "t" : "f", until].joined(separator: " ")
    }

    @Test func elementsOfOneNamespaceAndDecisionShareARow() {
        let requested = [
            RequestedElement(namespace: "a", element: "x", retention: .mayStore(days: 30)),
            RequestedElement(namespace: "a", element: "y", retention: .willNotStore),
            RequestedElement(namespace: "b", element: "x", retention: .mayStore(days: 30)),
            RequestedElement(namespace: "a", element: "v", retention: .mayStore(days: 7)),
        ]
        let result = Self.result(disclosing: [("a", "x"), ("a", "z"), ("a", "y"), ("b", "x"), ("a", "w"), ("b", "q"), ("b", "p"), ("a", "v"), ("a", "u"), ("a", "t"), ("a", "x")],
                                 requested: requested)
        let rows = Self.writer.elementGroups(for: result)
        #expect(rows.map(Self.describe) == [
            "a [x] t mayStore 30 request f 30d",
            "a [z,w,u,t] f willNotStore - not-requested f -",
            "a [y] t willNotStore - request f -",
            "b [x] t mayStore 30 request f 30d",
            "b [q,p] f willNotStore - not-requested f -",
            "a [v] t mayStore 7 request f 7d",
        ])
    }

    /// Past the list's limit the groups are found through an index: the same
    /// rows as a plain search over every group makes.
    @Test(arguments: [3, 16, 17, 60])
    func manyNamespacesKeepTheirOrder(_ namespaces: Int) {
        var names: [(String, String)] = []
        for round in 0..<3 {
            for index in 0..<namespaces { names.append(("ns\(index)", "e\(round)")) }
        }
        let requested = (0..<namespaces).filter { $0 % 5 == 0 }.map { RequestedElement(namespace: "ns\($0)", element: "e1", retention: .mayStore(days: 1)) }
        let result = Self.result(disclosing: names, requested: requested)
        let decided = Self.writer.decisions(for: result)

        // The reference: a search of every group so far, for every element.
        var groups: [(key: String, row: String, names: [String])] = []
        for item in decided {
            let key = "\(item.element.namespace)|\(item.requested)|\(item.decision)"
            if let at = groups.firstIndex(where: { $0.key == key }) {
                groups[at].names.append(item.element.identifier)
            } else {
                groups.append((key, item.element.namespace, [item.element.identifier]))
            }
        }
        let rows = Self.writer.elementGroups(for: result, decided: decided)
        #expect(rows.count == groups.count)
        #expect(rows.count == namespaces + requested.count)
        #expect(rows.map { Self.describe($0).split(separator: " ").prefix(2).joined(separator: " ") }
                == groups.map { "\($0.row) [\($0.names.joined(separator: ","))]" })
    }

    @Test func aResultWithoutAnIDHasNoRows() {
        let result = VerificationResult(requestID: nil, tenant: nil, flow: nil, verifiedAt: Self.verifiedAt, eventTime: nil,
                                        report: CheckReport(), documents: [], requestedElements: [], replayToken: nil)
        #expect(Self.writer.elementGroups(for: result).isEmpty)
    }
}

/// The groups the writer makes, stored as the worker stores them, read back
/// through the views: every disclosed element once, with its decision. A
/// group the column left out (as one of the wrong shape once was, without a
/// word) would be elements missing here.
@Suite(.enabled(if: Services.available, Services.skipMessage))
struct ElementGroupStorageTests {
    @Test func everyDecidedElementReadsBackThroughTheViews() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        defer { connection.close() }
        try Migrations.apply(on: connection)
        let requested = [
            RequestedElement(namespace: "a", element: "x", retention: .mayStore(days: 30)),
            RequestedElement(namespace: "a", element: "y", retention: .willNotStore),
            RequestedElement(namespace: "b", element: "x", retention: .mayStore(days: nil)),
        ]
        let result = ElementGroupTests.result(disclosing: [("a", "x"), ("a", "z"), ("a", "y"), ("b", "x"), ("b", "q\u{0}nul"), ("a", "w")],
                                              requested: requested)
        let decided = ElementGroupTests.writer.decisions(for: result)
        let groups = ElementGroupTests.writer.elementGroups(for: result, decided: decided)
        #expect(groups.count == 5)
        let verifiedAt = ElementGroupTests.verifiedAt
        try connection.execute(ResultsTable.insertNew([ResultsTable.Row(
            eventID: "r", tenant: nil, flow: nil, verdict: "verified", reasonCodes: [], docType: "d", issuerSubject: nil, issuerCountry: nil,
            msoSigned: nil, msoValidFrom: nil, msoValidUntil: nil, eventTime: nil, receivedAt: verifiedAt, verifiedAt: verifiedAt,
            processingSeconds: 0, sourceTopic: "veridoc.requests", sourcePartition: 0, sourceOffset: 0, assurance: "production", testKind: nil,
            elementGroups: ElementGroupsColumn.Value(groups), deviceAuth: nil, deviceReader: nil)]))

        let read = try connection.execute("""
            SELECT namespace, element, requested, retention_intent, retention_days, retention_source, retention_capped,
                   retain_until::text AS until
            FROM elements WHERE event_id = 'r'
            """)
        var stored: [String] = []
        for row in 0..<read.rowCount {
            let fields = [read.string(row, "namespace") ?? "?", read.string(row, "element") ?? "?", read.bool(row, "requested") == true ? "t" : "f",
                          read.string(row, "retention_intent") ?? "?", read.int(row, "retention_days").map { "\($0)" } ?? "-",
                          read.string(row, "retention_source") ?? "?", read.bool(row, "retention_capped") == true ? "t" : "f",
                          read.string(row, "until").map { $0 == "infinity" ? $0 : "instant" } ?? "-"]
            stored.append(fields.joined(separator: " "))
        }
        let expected = decided.map { item -> String in
            let (intent, days): (String, String) = switch item.decision.retention {
            case .willNotStore: ("willNotStore", "-")
            case .mayStore(let days): ("mayStore", days.map { "\($0)" } ?? "-")
            }
            let until = switch item.decision.expiry {
            case nil: "-"
            case .never: "infinity"
            case .at: "instant"
            }
            return [item.element.namespace, PostgresValue.storable(item.element.identifier), item.requested ? "t" : "f", intent, days,
                    item.decision.source.rawValue, item.decision.capped ? "t" : "f", until].joined(separator: " ")
        }
        #expect(stored.sorted() == expected.sorted())
        #expect(stored.count == 6)
    }
}
