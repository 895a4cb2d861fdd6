import CBOR
import Foundation
@testable import MDoc
import Retention
import Testing
@testable import Verification

/// One decision per distinct disclosed name, in disclosure order, with names
/// equal exactly when their UTF-8 bytes are — whether the writer keeps
/// them in its short list or, past its limit, in a set.
struct ElementDecisionTests {
    static let writer = RetentionWriter(directory: TenantDirectory([]), keys: nil)

    static func decided(_ names: [(String, String)]) -> [String] {
        let value = try! CBORDecoder().decode([0x01])
        let elements = names.map { DisclosedElement(namespace: $0.0, identifier: $0.1, value: value) }
        let summary = DocumentSummary(docType: "d", issuerSubject: nil, issuerCountry: nil, signed: nil, validFrom: nil, validUntil: nil,
                                      elements: Array(elements.prefix(elements.count / 2)))
        let second = DocumentSummary(docType: "d", issuerSubject: nil, issuerCountry: nil, signed: nil, validFrom: nil, validUntil: nil,
                                     elements: Array(elements.dropFirst(elements.count / 2)))
        let result = VerificationResult(requestID: "r", tenant: nil, flow: nil, verifiedAt: Date(timeIntervalSince1970: 0), eventTime: nil,
                                        report: CheckReport(), documents: [summary, second], requestedElements: [], replayToken: nil)
        return writer.decisions(for: result).map { "\($0.element.namespace)|\($0.element.identifier)" }
    }

    /// What a set of byte-compared pairs keeps, in order.
    static func reference(_ names: [(String, String)]) -> [String] {
        var kept: [(String, String)] = []
        for name in names where !kept.contains(where: { Array($0.0.utf8) == Array(name.0.utf8) && Array($0.1.utf8) == Array(name.1.utf8) }) {
            kept.append(name)
        }
        return kept.map { "\($0.0)|\($0.1)" }
    }

    static let tricky: [(String, String)] = [
        ("ns", "a"), ("ns", "b"), ("ns", "a"),            // a plain duplicate, across the two documents
        ("n", "sa"), ("ns", "a"),                         // the same bytes run together, different names
        ("ns", "K"), ("ns", "\u{212A}"),                  // Kelvin sign: canonically "K", another name by its bytes
        ("ns", "caf\u{E9}"), ("ns", "cafe\u{301}"),       // precomposed and decomposed é
        ("n\u{E9}", "x"), ("ne\u{301}", "x"), ("ns", "b"),
    ]

    @Test(arguments: [0, 40, 80])
    func duplicatesAreDroppedByTheirBytes(_ padding: Int) {
        // Padding with distinct names moves the writer from its list to its set.
        let names = Self.tricky + (0..<padding).map { ("pad", "e\($0)") } + Self.tricky.reversed()
        let decided = Self.decided(names)
        #expect(decided == Self.reference(names))
        #expect(decided.count == 9 + padding)
    }
}
