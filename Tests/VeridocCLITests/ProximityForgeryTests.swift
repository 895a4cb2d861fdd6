import Foundation
import Testing
import TestIssuer
import TestSupport
import Verification

/// Forgeries of a proximity presentation made with only what a relying party
/// sees (a credential's issuer-signed part, transcripts, keys of one's own),
/// through `veridoc verify` as an operator runs it: never exit 0.
struct ProximityForgeryTests {
    /// The test issuer's tenant, written as `veridoc` reads it, and `events` as files.
    func verify(_ events: [String: TestIssuer.GeneratedEvent], factory: TestIssuer.EventFactory) throws -> [String: CLI.Run] {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        var runs: [String: CLI.Run] = [:]
        for (name, event) in events {
            let file = directory.appendingPathComponent("\(name).json")
            try Data(event.json()).write(to: file)
            runs[name] = try CLI.run(["verify", "--config", config.path, "--json", file.path])
        }
        return runs
    }

    static func codes(_ run: CLI.Run) -> [String] {
        guard let outcome = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let data = outcome["data"] as? [String: Any], let reasons = data["reasons"] as? [[String: Any]] else { return [] }
        return reasons.compactMap { $0["code"] as? String }
    }

    @Test func aMacWithASubmitterChosenReaderKeyIsNeverVerified() throws {
        var factory = try TestIssuer.EventFactory(now: Date(), seed: 41)
        var bound = TestIssuer.EventOptions()
        bound.deviceMac = true
        let events = [
            // The forgery: a MAC over the submitter's own reader key, no reader signature.
            "forged": try factory.event(.isoDeviceResponse, fault: .unboundDeviceMac),
            // A response the device bound to the merchant's app, resubmitted as a proximity response.
            "foreign": try factory.event(.isoDeviceResponse, fault: .foreignTranscript),
            // The same MAC signed for by the tenant's registered reader: the control.
            "bound": try factory.event(.isoDeviceResponse, options: bound),
        ]
        let runs = try verify(events, factory: factory)
        let forged = try #require(runs["forged"])
        #expect(forged.status == 1, "\(forged.stdout)\(forged.stderr)")
        #expect(Self.codes(forged) == ["device.mac_unbound"])
        let foreign = try #require(runs["foreign"])
        #expect(foreign.status == 1, "\(foreign.stdout)\(foreign.stderr)")
        #expect(Self.codes(foreign) == ["payload.transcript_flow_mismatch"])
        let control = try #require(runs["bound"])
        #expect(control.status == 0, "\(control.stdout)\(control.stderr)")
        #expect(control.stdout.contains(#""deviceAuthentication":{"method":"mac","reader":"test-reader-1"}"#))
    }
}
