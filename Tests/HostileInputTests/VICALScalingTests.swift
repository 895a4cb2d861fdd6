import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
@testable import Verification
import TestSupport

/// A VICAL's `certificateInfos` and their docType lists are as long and as
/// odd as its publisher makes them: loading a tenant's list, then verifying
/// a document against it, costs instructions linear in their size, counted
/// by callgrind as in ScalingTests. One `veridoc verify` run per shape: its
/// tenants hold lists of n, 2n and 4n (after one of n/2 that pays for
/// first use), each tenant's loading is counted apart (a dump after each
/// `Configuration.loadTenant`), and so is each tenant's document (a dump as
/// each event is read).
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

    static let loadTenant = "$s12Verification13ConfigurationV10loadTenant*YKFZ"

    @Test(arguments: shapes)
    func loadingAndUsingTheListIsLinear(_ shape: Shape) throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let factory = try TestIssuer.EventFactory(now: now, seed: 41)
        let list = try TestIssuer.TrustList(now: now)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-vical-scaling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try TestIssuer.PEM.certificates([list.root]).write(to: directory.appendingPathComponent("vical-root.pem"), atomically: true, encoding: .utf8)

        let n = shape.base
        let counts = [n / 2, n, 2 * n, 4 * n]
        var tenants: [[String: Any]] = []
        var events: [URL] = []
        for (index, count) in counts.enumerated() {
            // The same issuer, another tenant: each document is verified against its own tenant's list.
            var tenantFactory = factory
            tenantFactory.merchant = try TestIssuer.Merchant(tenantID: "vical-\(index)", merchantID: "merchant.com.example.vical\(index)")
            let name = "\(shape.name)-\(index)-\(count)"
            try Data(try list.vical(try shape.entries(factory.authority.iaca, count), date: now - 3_600, nextUpdate: now + 86_400))
                .write(to: directory.appendingPathComponent("\(name).vical"))
            tenants.append(["id": tenantFactory.merchant.tenantID, "vicals": [["file": "\(name).vical", "anchors": ["vical-root.pem"]]]])
            events.append(directory.appendingPathComponent("\(name).json"))
            try Data(try tenantFactory.event(.isoDeviceResponse).json()).write(to: events[index])
        }
        let config = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: ["tenants": tenants]).write(to: config)

        let run = try Callgrind.verify(config: config, at: now, events: events, dumpingAfter: [Self.loadTenant], scratch: directory)
        // Every document verifies (the first twice: Callgrind.verify reads it again): each whole list was read and its last entry used.
        let verdicts = run.output.split(separator: "\n").map { $0.contains("\"verdict\":\"verified\"") }
        #expect(verdicts == Array(repeating: true, count: counts.count + 1), "\(shape.name): \(run.output.prefix(600))")
        // The start-up and the first tenant; each other tenant; up to the first event; the four events.
        try #require(run.parts.count == counts.count + 1 + counts.count, "\(shape.name): \(run.parts.count) parts: \(run.parts)")
        let loading = Array(run.parts.prefix(counts.count))
        let verifying = Array(run.parts[(counts.count + 1)...].prefix(counts.count))
        // The first tenant, of n/2, paid for first use; the measured ones are the other three.
        let costs = (1..<counts.count).map { loading[$0] + verifying[$0] }
        let first = Double(costs[1] - costs[0]), second = Double(costs[2] - costs[1])
        print("scaling VICAL \(shape.name): n = \(n), \(2 * n), \(4 * n): instructions \(costs), growth \(String(format: "%.2f", second / first))")
        #expect(first > 0, "\(shape.name): \(costs)")
        #expect(second / first <= ScalingTests.maximumGrowth, "\(shape.name): \(costs)")
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
