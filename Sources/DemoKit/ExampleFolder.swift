import Foundation
import MDoc
import TestIssuer
import Verification

/// A folder a newcomer can verify from a clone of the repository alone: the
/// test issuer's tenant (`config.json` with its keys and IACA), one event
/// per flow that verifies, a few that are rejected for different reasons, and
/// the verification time they were made for (`AT`): certificates and MSOs
/// are laid out around it, so `veridoc verify --at` with it gives the same
/// verdicts whenever it is run.
public struct ExampleFolder {
    /// File name → the reason codes `veridoc verify` reports ([] for verified).
    public static let events: [(name: String, flow: Flow, fault: TestIssuer.Fault?)] = [
        ("apple-wallet-app.verified.json", .appleWalletApp, nil),
        ("apple-wallet-web.verified.json", .appleWalletWeb, nil),
        ("iso-device-response.verified.json", .isoDeviceResponse, nil),
        ("openid4vp-dc-api.verified.json", .openID4VPDCAPI, nil),
        ("apple-wallet-app.rejected-mso-expired.json", .appleWalletApp, .msoExpired),
        ("apple-wallet-app.rejected-wrong-nonce.json", .appleWalletApp, .wrongNonce),
        ("apple-wallet-web.rejected-altered-element.json", .appleWalletWeb, .alteredElement),
        ("iso-device-response.rejected-untrusted-issuer.json", .isoDeviceResponse, .untrustedIssuer),
    ]

    public let directory: URL
    public let at: Date

    /// Writes the folder (which must not exist yet, or be empty) for verification at `at`.
    public static func write(to directory: URL, at: Date = Date(), seed: UInt64 = 2026) throws -> ExampleFolder {
        let at = Date(timeIntervalSince1970: at.timeIntervalSince1970.rounded(.down))
        let files = FileManager.default
        if files.fileExists(atPath: directory.path), !((try? files.contentsOfDirectory(atPath: directory.path)) ?? []).isEmpty {
            throw TestIssuer.FixtureError("\(directory.path) exists and is not empty")
        }
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        var factory = try TestIssuer.EventFactory(now: at, seed: seed)
        try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        for (name, flow, fault) in events {
            let event = try factory.event(flow, fault: fault)
            try Data(event.json()).write(to: directory.appendingPathComponent(name))
        }
        try Data((RFC3339.string(from: at) + "\n").utf8).write(to: directory.appendingPathComponent("AT"))
        return ExampleFolder(directory: directory, at: at)
    }
}
