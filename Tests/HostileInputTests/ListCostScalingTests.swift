import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import TestSupport
import Verification

/// The revocation lists a document names are the issuer's, but their size is
/// whatever the list server sends: reading one costs time linear in it, as
/// every other dimension (ScalingTests' rule). One `veridoc verify` run under
/// callgrind reads four events, each naming its own list served by this
/// process, of n/2 (the run's first list, which pays what a first fetch does
/// once), n, 2n and 4n entries, identifiers or claims; callgrind counts each
/// event apart, fetch included, since the event waits for its list.
@Suite(.enabled(if: Callgrind.available, "valgrind not installed (make setup installs it)"))
struct ListCostScalingTests {
    struct Dimension: CustomTestStringConvertible, Sendable {
        let name: String
        let base: Int
        let kind: TestIssuer.ListPublisher.Kind
        let content: @Sendable (Int) -> TestIssuer.ListPublisher.Content
        var extraClaims: @Sendable (Int) -> [CBOR.MapEntry] = { _ in [] }
        var testDescription: String { name }
    }

    static let dimensions: [Dimension] = [
        // Entries of 8 bits, each a different value, so compression keeps the list large.
        Dimension(name: "statusListEntries", base: 100_000, kind: .statusList) { count in
            .statuses(bits: 8, (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) % 3 })
        },
        Dimension(name: "identifiers", base: 1_000, kind: .identifierList) { count in
            .identifiers((0..<count).map { index in withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } + [UInt8](repeating: 0xa5, count: 24) })
        },
        Dimension(name: "tokenClaims", base: 2_000, kind: .statusList, content: { _ in .statuses(bits: 1, [0]) },
                  extraClaims: { count in (0..<count).map { CBOR.MapEntry(.unsigned(UInt64(100_000 + $0)), .unsigned(UInt64($0))) } }),
    ]

    @Test(arguments: dimensions)
    func costIsLinearInTheList(_ dimension: Dimension) throws {
        let events = try TestIssuer.HostileEvents(now: Date(), seed: 78)
        let server = try ListServer()
        defer { server.stop() }
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try events.factory.merchant.writeConfiguration(
            to: directory, trustAnchors: [events.factory.authority.iaca], tenantSettings: ["status": ["mode": "required", "maxWaitSeconds": 300]],
            settings: ["statusLists": ["allowInsecure": true, "timeoutSeconds": 300, "maxResponseBytes": 64 << 20]])
        let signer = try events.factory.authority.issuingListSigner(now: events.now)
        var factory = events.factory
        let n = dimension.base
        var files: [URL] = []
        for count in [n / 2, n, 2 * n, 4 * n] {
            let path = "/list-\(count)"
            let issued = Int64(events.now.timeIntervalSince1970)
            var publisher = TestIssuer.ListPublisher(kind: dimension.kind, content: dimension.content(count), subject: server.url(path),
                                                     issuedAt: issued - 60, expiresAt: issued + 3_600)
            publisher.extraClaims = dimension.extraClaims(count)
            server.publish(path, try publisher.signed(by: signer.key, chain: [signer.certificate]), mediaType: dimension.kind.mediaType)
            var options = TestIssuer.EventOptions()
            options.status = dimension.kind == .statusList
                ? MSOStatus(statusList: .init(index: 0, uri: server.url(path)))
                : MSOStatus(identifierList: .init(id: [UInt8](repeating: 0xff, count: 32), uri: server.url(path)))
            files.append(try Self.write(try factory.event(.isoDeviceResponse, options: options), count: count, to: directory))
        }
        let costs = Array(try Callgrind.instructionsPerEvent(config: config, at: events.now, events: files, scratch: directory).dropFirst())
        try Self.expectLinear(dimension.name, n: n, costs: costs, config: config, event: files.last!, at: events.now)
    }

    /// The event's file in `directory`, named for its list's size.
    static func write(_ event: TestIssuer.GeneratedEvent, count: Int, to directory: URL) throws -> URL {
        let file = directory.appendingPathComponent("event-\(count).json")
        try Data(event.json()).write(to: file)
        return file
    }

    /// A new folder for one test's config and event.
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-list-scaling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The largest list was read to its answer (not refused at a bound), and
    /// doubling it from 2n to 4n cost at most `maximumGrowth` times what n
    /// to 2n did.
    static func expectLinear(_ name: String, n: Int, costs: [Int], config: URL, event: URL, at time: Date) throws {
        let run = try Subprocess.run(Binaries.veridoc, ["verify", "--config", config.path, "--at", RFC3339.string(from: time), "--json", event.path])
        let data = (try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])?["data"] as? [String: Any]
        #expect(data?["status"] as? String == "valid", "\(name): \(run.output.prefix(2000))")
        let first = Double(costs[1] - costs[0]), second = Double(costs[2] - costs[1])
        print("list scaling \(name): n = \(n), \(2 * n), \(4 * n): instructions \(costs), growth \(String(format: "%.2f", second / first))")
        #expect(first > 0, "\(name): \(costs)")
        #expect(second / first <= ScalingTests.maximumGrowth,
                "\(name): doubling \(2 * n) to \(4 * n) added \(Int(second)) instructions, \(n) more added \(Int(first)): \(costs)")
    }

    /// The same for a CRL its document signer names: n/2, n, 2n and 4n
    /// entries (none of them the signer), each with a reason code, each list
    /// named by a document signer of its own under the one IACA.
    @Test func crlCostIsLinearInItsEntries() throws {
        let events = try TestIssuer.HostileEvents(now: Date(), seed: 79)
        let server = try ListServer()
        defer { server.stop() }
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var factory = events.factory
        let config = try factory.merchant.writeConfiguration(
            to: directory, trustAnchors: [factory.authority.iaca], tenantSettings: ["status": ["mode": "required", "maxWaitSeconds": 300]],
            settings: ["statusLists": ["allowInsecure": true, "timeoutSeconds": 300, "maxResponseBytes": 64 << 20]])
        let authority = factory.authority

        // An entry costs as much as dozens of identifiers: fewer show the shape.
        let n = 625
        var files: [URL] = []
        for count in [n / 2, n, 2 * n, 4 * n] {
            let path = "/ds-\(count).crl"
            factory.authority = try authority.namingRevocationLists(documentSigner: [server.url(path)])
            // Serials from 2^40 up: the signer's is a random 64-bit number, never among them by more than chance.
            let entries = (0..<count).map { CertificateRevocationListBuilder.Entry(serialNumber: (1 << 40) + UInt64($0), reason: 1) }
            server.publish(path, try factory.authority.revocationList(entries, thisUpdate: events.now - 600, nextUpdate: events.now + 86_400),
                           mediaType: "application/pkix-crl")
            files.append(try Self.write(try factory.event(.isoDeviceResponse), count: count, to: directory))
        }
        let costs = Array(try Callgrind.instructionsPerEvent(config: config, at: events.now, events: files, scratch: directory).dropFirst())
        try Self.expectLinear("crlEntries", n: n, costs: costs, config: config, event: files.last!, at: events.now)
    }
}
