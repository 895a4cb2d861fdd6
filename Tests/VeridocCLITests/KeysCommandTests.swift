import Deployment
import Foundation
import Testing
import TestIssuer
import Webhooks

@Suite struct KeysCommandTests {
    @Test func generateWritesAPrivateKeyOnlyItsOwnerCanReadAndPrintsItsHash() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try CLI.run(["keys", "generate", directory.path])
        #expect(run.status == 0, "\(run.stderr)")
        let printed = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("pkRHash:") }?.split(separator: " ").last.map(String.init))
        #expect(printed.count == 64)

        let keyPath = directory.appendingPathComponent("merchant-key.pem").path
        let permissions = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(!run.stdout.contains("PRIVATE KEY"), "key material is never printed")

        // The hash of the key file, of the certificate and the printed one agree.
        let fromKey = try CLI.run(["keys", "hash", keyPath])
        let fromCertificate = try CLI.run(["keys", "hash", directory.appendingPathComponent("merchant-cert.pem").path])
        #expect(fromKey.status == 0 && fromCertificate.status == 0)
        #expect(fromKey.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == printed)
        #expect(fromCertificate.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == printed)

        // A second generate into the same folder must not overwrite the key.
        let again = try CLI.run(["keys", "generate", directory.path])
        #expect(again.status == 2)
        #expect(again.stderr.contains("refusing to overwrite"))
    }

    @Test(.enabled(if: CLI.vectors != nil, "shared/vectors not found: Apple's sample key is needed"))
    func hashOfApplesSampleKeyIsTheDocumentedPkRHash() throws {
        let key = try #require(CLI.vectors).appendingPathComponent("apple-verify-with-wallet-sample/merchant_encryption_key.pem")
        let run = try CLI.run(["keys", "hash", key.path])
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b2c00f06b2df645691174f1331ade35141f17e19b3021d07560b4a71fc61818c")
    }

    /// Every key file a deployment names can be made here, and the config's
    /// readers take each where it goes: the replay key, a reader-token signing
    /// key, an outcome recipient's public key (its private half is the
    /// integrator's); none is made over an existing file.
    @Test func everyKeyFileADeploymentNamesIsMadeAndAccepted() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        for command in [["generate-replay-key", path("nonce.key")], ["generate-signing-key", path("reader-token-key.pem")],
                        ["generate-outcome-key", path("outcomes")], ["generate", path("pki")],
                        ["generate-webhook-secret", path("hook.whsec")], ["generate-webhook-key", path("hook-ed25519.pem")]] {
            let run = try CLI.run(["keys"] + command)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(!run.stdout.contains("PRIVATE KEY") && !run.stdout.contains("whsec_"), "key material is never printed")
            #expect(try CLI.run(["keys"] + command).status == 2, "\(command) again must not overwrite")
        }
        for secret in ["nonce.key", "reader-token-key.pem", "outcomes/outcome-recipient-key.pem", "pki/merchant-key.pem", "hook.whsec", "hook-ed25519.pem"] {
            #expect(try FileManager.default.attributesOfItem(atPath: path(secret))[.posixPermissions] as? Int == 0o600, "\(secret)")
        }
        try TestIssuer.PEM.certificates([try TestIssuer.Authority(now: Date()).iaca]).write(toFile: path("iaca.pem"), atomically: true, encoding: .utf8)
        let config: [String: Any] = [
            "tenants": [["id": "acme", "trustAnchors": ["iaca.pem"], "encryptionKeys": ["pki/merchant-key.pem"],
                         "outcomeRecipientKey": "outcomes/outcome-recipient.pem",
                         "readerTokens": ["brandId": "BRAND00001", "keyId": "KEY0000001", "signingKey": "reader-token-key.pem"],
                         "webhooks": [["id": "primary", "url": "https://hooks.example.com/veridoc", "secrets": ["hook.whsec"], "signingKey": "hook-ed25519.pem"]]]],
            "replay": ["nonceKeyFile": "nonce.key"],
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: directory.appendingPathComponent("config.json"))
        let deployment = try Deployment.load(from: directory.appendingPathComponent("config.json"), environment: [:])
        #expect(try deployment.requiredReplayKey().count == 32)
        let tenant = try #require(deployment.tenants["acme"])
        #expect(tenant.outcomeRecipientKey != nil && tenant.readerTokenKey != nil)
        let hook = try #require(deployment.webhooks.endpoints.first)
        #expect(hook.tenant == "acme" && hook.eventTypes.count == 2)
        let printed = try CLI.run(["keys", "generate-webhook-key", path("other-ed25519.pem")]).stdout
        #expect(hook.signer.publicKeys.count == 1 && hook.signer.publicKeys.allSatisfy { $0.hasPrefix("whpk_") && !printed.contains($0) }, "each key its own")
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(try CLI.run(["keys"]).status == 2)
        #expect(try CLI.run(["keys", "hash", "/nonexistent/file.pem"]).status == 2)
        #expect(try CLI.run(["frobnicate"]).status == 2)
    }
}
