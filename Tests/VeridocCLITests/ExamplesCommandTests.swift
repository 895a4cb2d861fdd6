import Foundation
import Testing
import TestSupport

/// `veridoc-dev examples DIR` makes a folder `veridoc verify` can be tried
/// on from a clone alone: each event verifies or is rejected as its name
/// says, at the time in DIR/AT, and the folder is never written over.
@Suite struct ExamplesCommandTests {
    static let expected: [String: [String]] = [
        "apple-wallet-app.verified.json": [], "apple-wallet-web.verified.json": [], "iso-device-response.verified.json": [],
        "openid4vp-dc-api.verified.json": [],
        "apple-wallet-app.rejected-mso-expired.json": ["mso.expired"],
        "apple-wallet-app.rejected-wrong-nonce.json": ["decryption.transcript_mismatch"],
        "apple-wallet-web.rejected-altered-element.json": ["mso.digest_mismatch"],
        "iso-device-response.rejected-untrusted-issuer.json": ["issuer.untrusted"],
    ]

    @Test func everyExampleIsJudgedAsItsNameSays() throws {
        let parent = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("examples")
        let made = try CLI.dev(["examples", folder.path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("veridoc verify --config \(folder.path)/config.json --at "), "\(made.stdout)")
        let at = try String(contentsOf: folder.appendingPathComponent("AT"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let events = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") && $0 != "config.json" }.sorted()
        #expect(Set(events) == Set(Self.expected.keys))
        let verify = ["verify", "--config", folder.appendingPathComponent("config.json").path, "--at", at, "--json"]
        // Every event in one run: one outcome line each, in the order given, and 1 because some are rejected.
        let all = try CLI.run(verify + events.map { folder.appendingPathComponent($0).path })
        #expect(all.status == 1, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n")
        try #require(lines.count == events.count, "\(all.stdout)")
        for (event, line) in zip(events, lines) {
            let outcome = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let codes = ((outcome?["data"] as? [String: Any])?["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(codes == Self.expected[event], "\(event)")
        }
        let verified = try CLI.run(verify + events.filter { $0.hasSuffix(".verified.json") }.map { folder.appendingPathComponent($0).path })
        #expect(verified.status == 0 && verified.stdout.split(separator: "\n").count == 4, "\(verified.stdout) \(verified.stderr)")
        let twice = try CLI.run(verify + ["-", "-"])
        #expect(twice.status == 2 && twice.stderr.contains("standard input"), "\(twice.stderr)")
        let again = try CLI.dev(["examples", folder.path])
        #expect(again.status == 1 && again.stderr.contains("not empty"), "an existing folder is never written over: \(again.stderr)")
    }
}
