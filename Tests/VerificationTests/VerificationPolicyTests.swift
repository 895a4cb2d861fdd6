import Foundation
import Testing
import TestSupport
@testable import Verification

/// One list, `VerificationPolicy.checks`, is the run order, the report order
/// of checks and of reason codes, and what each check may report. These tests
/// hold the enums, Schemas/reason-codes.md, the outcome schema and its
/// examples to it, so that none of them can drift.
@Suite struct VerificationPolicyTests {
    static let schemas = Binaries.repository.appendingPathComponent("Schemas")

    @Test func everyCheckIsListedOnceInItsEnumOrder() {
        let names = VerificationPolicy.checks.map { $0.name }
        #expect(names == CheckName.allCases, "the policy list and CheckName's cases differ")
        #expect(Set(names).count == names.count)
        #expect(CheckName.order == names)
    }

    @Test func everyReasonCodeIsDeclaredByACheckInItsEnumOrder() {
        #expect(ReasonCode.order == ReasonCode.allCases, "reasons are reported in declaration order, which ReasonCode's cases must follow")
        for check in VerificationPolicy.checks {
            #expect(!check.reasons.isEmpty, "\(check.name.rawValue) declares no reason")
            for code in check.reasons { #expect(VerificationPolicy.declares(check.name, code)) }
        }
        #expect(!VerificationPolicy.declares(.requestAge, .eventInvalid))
    }

    @Test func theChecksAVerdictMayLackAreTheOnesThatDoNotAlwaysApply() {
        let optional = CheckName.order.filter { !$0.isRequiredForVerified }
        #expect(optional == [
            .payloadTranscript, .payloadReader, .decryptionKey, .decryptionTranscript, .decryptionOpen, .msoElementTypes, .documentStatus,
            .responseQuery, .requestIssuedNonce, .requestNonce,
        ])
    }

    /// reason-codes.md's check table: one row per check in policy order, each
    /// naming exactly the codes the check declares; its code table lists every
    /// code in report order.
    @Test func reasonCodesDocumentFollowsThePolicy() throws {
        let text = try String(contentsOf: Self.schemas.appendingPathComponent("reason-codes.md"), encoding: .utf8)
        let checkRows = try Self.tableRows(in: text, after: "## Checks")
        #expect(checkRows.map(\.first) == CheckName.order.map(\.rawValue))
        for (row, check) in zip(checkRows, VerificationPolicy.checks) {
            let documented = Set(Self.codes(in: row.last ?? ""))
            #expect(documented == Set(check.reasons.map(\.rawValue)), "reason-codes.md, row \(check.name.rawValue): \(documented.sorted())")
        }
        let codeRows = try Self.tableRows(in: text, after: "## Codes")
        #expect(codeRows.map(\.first) == ReasonCode.order.map(\.rawValue))
    }

    @Test func outcomeSchemaEnumsFollowThePolicy() throws {
        let schema = try Self.json("verification-completed.v1.schema.json")
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let reasonCodes = (definitions["reasonCode"] as? [String: Any])?["enum"] as? [String]
        #expect(reasonCodes == ReasonCode.order.map(\.rawValue))
        let check = (definitions["check"] as? [String: Any])?["properties"] as? [String: Any]
        let names = (check?["name"] as? [String: Any])?["enum"] as? [String]
        #expect(names == CheckName.order.map(\.rawValue))
    }

    /// Every outcome example lists every check in policy order, and only codes that exist.
    @Test func outcomeExamplesFollowThePolicy() throws {
        let examples = try FileManager.default.contentsOfDirectory(atPath: Self.schemas.appendingPathComponent("examples").path)
            .filter { $0.hasPrefix("verification-completed.") }
        #expect(examples.count >= 2)
        for example in examples {
            let data = try #require(try Self.json("examples/" + example)["data"] as? [String: Any])
            let checks = try #require(data["checks"] as? [[String: Any]])
            #expect(checks.compactMap { $0["name"] as? String } == CheckName.order.map(\.rawValue), "\(example)")
            let reasons = try #require(data["reasons"] as? [[String: Any]])
            for reason in reasons {
                let code = try #require(reason["code"] as? String)
                #expect(ReasonCode(rawValue: code) != nil, "\(example): \(code)")
            }
        }
    }

    // MARK: reading the documents

    static func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: schemas.appendingPathComponent(path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The cells of each row of the first table after `heading`, the first
    /// cell without its backticks; the header and divider rows left out.
    static func tableRows(in text: String, after heading: String) throws -> [[String]] {
        let start = try #require(text.range(of: "\n" + heading + "\n"), "no \(heading)")
        var rows: [[String]] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            rows.append([cells.first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "`")) } ?? ""] + cells.dropFirst())
        }
        // The header row and the |---| divider.
        return Array(rows.dropFirst(2))
    }

    /// The backticked tokens of a table cell shaped like a reason code
    /// (`stage.name`), so that a misspelt code shows up as a difference.
    static func codes(in cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { $0.wholeMatch(of: /[a-z]+\.[a-z_]+/) != nil }
    }
}
