import CBOR
import Foundation
@testable import MDoc
import Postgres
import Retention
import Storage
import Testing
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

    /// A row as text: namespace, names, requested, intent, days, source, capped, retain_until.
    static func describe(_ row: [PostgresValue]) -> String {
        row.dropFirst().map { value -> String in
            switch value {
            case .null: "-"
            case .text(let text): text
            case .textArray(let names): "[" + names.joined(separator: ",") + "]"
            case .bool(let flag): flag ? "t" : "f"
            case .int(let number): "\(number)"
            case .timestamp(let date): "\(Int(date.timeIntervalSince(verifiedAt) / 86_400))d"
            default: "?"
            }
        }.joined(separator: " ")
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
        let rows = Self.writer.elementGroupRows(for: result)
        #expect(rows.allSatisfy { $0.first == .text("r") && $0.count == ElementGroupsColumn.columns.count })
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
        let rows = Self.writer.elementGroupRows(for: result, decided: decided)
        #expect(rows.count == groups.count)
        #expect(rows.count == namespaces + requested.count)
        #expect(rows.map { Self.describe($0).split(separator: " ").prefix(2).joined(separator: " ") }
                == groups.map { "\($0.row) [\($0.names.joined(separator: ","))]" })
    }

    @Test func aResultWithoutAnIDHasNoRows() {
        let result = VerificationResult(requestID: nil, tenant: nil, flow: nil, verifiedAt: Self.verifiedAt, eventTime: nil,
                                        report: CheckReport(), documents: [], requestedElements: [], replayToken: nil)
        #expect(Self.writer.elementGroupRows(for: result).isEmpty)
    }
}
