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
        let events = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") && $0 != "config.json" }
        #expect(Set(events) == Set(Self.expected.keys))
        for event in events {
            let run = try CLI.run(["verify", "--config", folder.appendingPathComponent("config.json").path, "--at", at, "--json",
                                   folder.appendingPathComponent(event).path])
            let reasons = Self.expected[event] ?? ["?"]
            #expect(run.status == (reasons.isEmpty ? 0 : 1), "\(event): \(run.stdout) \(run.stderr)")
            let outcome = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            let codes = ((outcome?["data"] as? [String: Any])?["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(codes == reasons, "\(event)")
        }
        let again = try CLI.dev(["examples", folder.path])
        #expect(again.status == 1 && again.stderr.contains("not empty"), "an existing folder is never written over: \(again.stderr)")
    }
}
