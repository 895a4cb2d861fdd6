import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
@testable import Verification
import TestSupport

/// A VICAL's `certificateInfos` and their docType lists are as long and as
/// odd as its publisher makes them: `veridoc verify` (which loads the list,
/// then verifies one document against it) costs instructions linear in their
/// size, counted by callgrind as in ScalingTests.
@Suite(.enabled(if: Callgrind.available, "valgrind not installed (make setup installs it)"))
struct VICALScalingTests {
    struct Shape: CustomTestStringConvertible, Sendable {
        let name: String
        let base: Int
        /// The list's entries for `count`; the factory's IACA must be among them, listed for the mDL.
        let entries: @Sendable (Certificate, Int) throws -> [TestIssuer.TrustList.Entry]
        var testDescription: String { name }
    }

    static let mDL = TestIssuer.Credential.mDLDocType

    static let shapes: [Shape] = [
        // One entry with a long list, the matching docType last.
        Shape(name: "docTypes", base: 2_000) { iaca, count in
            [.init(iaca, docTypes: (0..<count).map { "org.example.doctype.\($0)" } + [mDL])]
        },
        // The same name again and again (every one hashes alike).
        Shape(name: "repeatedDocTypes", base: 1_000) { iaca, count in
            [.init(iaca, docTypes: Array(repeating: "org.iso.18013.5.1.mDL\u{212A}", count: count) + [mDL])]
        },
        // Names of a kilobyte each, sharing a long prefix.
        Shape(name: "longDocTypes", base: 200) { iaca, count in
            let prefix = String(repeating: "org.iso.18013.5.1.", count: 55)
            return [.init(iaca, docTypes: (0..<count).map { prefix + "\($0)" } + [mDL])]
        },
        // Many entries naming the same IACA, each with its own docType (each costs as much as thousands of names).
        Shape(name: "entriesForOneIACA", base: 25) { iaca, count in
            (0..<count).map { .init(iaca, docTypes: ["org.example.doctype.\($0)"]) } + [.init(iaca, docTypes: [mDL])]
        },
    ]

    @Test(arguments: shapes)
    func loadingAndUsingTheListIsLinear(_ shape: Shape) throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        var factory = try TestIssuer.EventFactory(now: now, seed: 41)
        let list = try TestIssuer.TrustList(now: now)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-vical-scaling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try TestIssuer.PEM.certificates([list.root]).write(to: directory.appendingPathComponent("vical-root.pem"), atomically: true, encoding: .utf8)
        let event = directory.appendingPathComponent("event.json")
        try Data(try factory.event(.isoDeviceResponse).json()).write(to: event)

        let n = shape.base
        var costs: [Int] = []
        for count in [n, 2 * n, 4 * n] {
            let name = "\(shape.name)-\(count)"
            try Data(try list.vical(try shape.entries(factory.authority.iaca, count), date: now - 3_600, nextUpdate: now + 86_400))
                .write(to: directory.appendingPathComponent("\(name).vical"))
            let config = directory.appendingPathComponent("\(name).json")
            let tenant: [String: Any] = ["id": factory.merchant.tenantID, "vicals": [["file": "\(name).vical", "anchors": ["vical-root.pem"]]]]
            try JSONSerialization.data(withJSONObject: ["tenants": [tenant]]).write(to: config)
            // The document verifies: the whole list was read and its last entry used.
            let run = try CLI.run(config: config, event: event, at: now)
            #expect(run.contains("\"verdict\":\"verified\""), "\(name): \(run.prefix(600))")
            costs.append(try Callgrind.instructions(["verify", "--config", config.path, "--at", RFC3339.string(from: now), "--json", event.path]))
        }
        let first = Double(costs[1] - costs[0]), second = Double(costs[2] - costs[1])
        print("scaling VICAL \(shape.name): n = \(n), \(2 * n), \(4 * n): instructions \(costs), growth \(String(format: "%.2f", second / first))")
        #expect(first > 0, "\(shape.name): \(costs)")
        #expect(second / first <= ScalingTests.maximumGrowth, "\(shape.name): \(costs)")
    }

    /// `veridoc verify --json`'s standard output.
    enum CLI {
        static func run(config: URL, event: URL, at time: Date) throws -> String {
            let process = Process()
            process.executableURL = Binaries.veridoc
            process.arguments = ["verify", "--config", config.path, "--at", RFC3339.string(from: time), "--json", event.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
    }
}

/// What odd docType lists mean: names are compared by their bytes, so a
/// lookalike of the mDL docType listed a thousand times vouches for no mDL.
@Suite struct VICALOddDocTypeTests {
    @Test func aLookalikeDocTypeVouchesForNothing() throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        var factory = try TestIssuer.EventFactory(now: now, seed: 43)
        let iaca = factory.authority.iaca
        let listed = ListedAnchor(
            certificate: iaca, docTypes: Array(repeating: "org.iso.18013.5.1.mDL\u{212A}", count: 1_000) + ["org.iso.18013.5.1.md\u{004C}\u{0301}"],
            list: "odd.vical", trustedUntil: now + 86_400)
        let tenant = try factory.merchant.tenant(trusting: [])
        let scoped = Tenant(id: tenant.id, merchantIDs: tenant.merchantIDs, teamID: tenant.teamID, keys: tenant.keys, trustAnchors: [], listedAnchors: [listed],
                            origins: tenant.origins)
        let result = Verifier(directory: TenantDirectory([scoped])).verify(eventJSON: try factory.event(.isoDeviceResponse).json(), at: now)
        #expect(result.report.reasons.map(\.code) == [.issuerDoctypeNotAuthorized], "\(result.report.reasons.map(\.detail))")
    }
}
