import CBOR
import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import Testing
import TestIssuer
import Verification
import TestSupport

/// Every dimension of an event that its sender controls costs time linear in
/// its size (n log n at worst): `veridoc verify` under callgrind verifies
/// events with n, 2n and 4n items of each dimension, after one of n/2 that
/// pays the dimension's first-use costs, and the instructions the second
/// doubling adds may be at most `maximumGrowth` times those the first added
/// (2 for linear work, about 2.1 for n log n, 4 for quadratic). The counts
/// are exact, so the test does not depend on the machine's speed or load.
///
/// The dimensions share runs: a run's start-up under valgrind (reading the
/// binaries' symbols, dynamic linking, the configuration, the first event's
/// one-time work) costs as much as a dimension's four events, and callgrind
/// counts each event apart anyway. Two runs keep two cores busy.
@Suite(.enabled(if: Callgrind.available, "valgrind not installed (make setup installs it)"))
struct ScalingTests {
    static let maximumGrowth = 2.6

    /// One dimension: the smallest n, large enough that the work per item
    /// outweighs a run's noise (allocator, hash seeds) and a quadratic term
    /// shows, small enough that a debug build under callgrind stays within seconds.
    struct Dimension: CustomTestStringConvertible, Sendable {
        let name: String
        let base: Int
        let build: @Sendable (TestIssuer.HostileEvents, Int) throws -> [UInt8]
        var testDescription: String { name }
    }

    static let dimensions: [Dimension] = TestIssuer.HostileDimension.allCases.compactMap { dimension in
        let base: Int
        switch dimension {
        // At most 16 documents are read (DeviceResponse.maxDocuments), each costing its signatures.
        case .documents: base = 4
        // 1,000 values each: 16 of them stay within the event's item budget.
        case .tag24Items: base = 4
        // Capped (8 certificates; 256 members an object) and refused past the cap: nothing grows.
        case .x5chain, .eventAttributes: return nil
        // The same readers as .documents and .responseUnknownKeys (the flows differ in
        // decryption, linear in the bytes; every map the general decoder reads has one
        // duplicate check); the web flow's in-place readers are measured below.
        case .documentsApp, .documentsWeb, .documentUnknownKeys, .issuerSignedUnknownKeys: return nil
        // Costly per item (signed elements, each digested and reported): fewer show the shape.
        case .outcomeElements, .namespaces, .elements, .detail: base = 64
        case .requestedElements: base = 250
        case .deviceNamespaces: base = 125
        default: base = 1_000
        }
        return Dimension(name: dimension.rawValue, base: base) { events, count in try events.event(dimension, count: count) }
    } + [
        // Unknown keys where the web flow's DeviceResponse is read in place.
        Dimension(name: "responseUnknownKeysWeb", base: 1_000) { events, count in
            try webResponse(events) { response in response.adding(keys: count) }
        },
        Dimension(name: "documentUnknownKeysWeb", base: 1_000) { events, count in
            try webResponse(events) { response in response.editingDocument { $0.adding(keys: count) } }
        },
        Dimension(name: "issuerSignedUnknownKeysWeb", base: 1_000) { events, count in
            try webResponse(events) { response in
                response.editingDocument { document in document.replacing("issuerSigned", with: document["issuerSigned"]!.adding(keys: count)) }
            }
        },
    ]

    /// The session transcript, read for its form and encoded canonically for
    /// the presentation's identity (payload.transcript): a DeviceEngagement of
    /// n extra members, and a remote handover of n items.
    static let transcriptDimensions: [Dimension] = [
        Dimension(name: "deviceEngagementMembers", base: 500) { events, count in
            let device = try PrivateKey.generate(curve: .p256)
            let reader = try PrivateKey.generate(curve: .p256)
            var engagement: [CBOR.MapEntry] = [.init(0, "1.0"), .init(1, [1, .embedded(COSEKey.encode(device.publicKey))])]
            engagement += (0..<count).map { CBOR.MapEntry(.unsigned(UInt64(100 + $0)), .unsigned(UInt64($0))) }
            return try isoEvent(events, transcript: CBOR.array([.embedded(.map(engagement)), .embedded(COSEKey.encode(reader.publicKey)), nil]).encoded())
        },
        Dimension(name: "handoverItems", base: 500) { events, count in
            try isoEvent(events, transcript: CBOR.array([nil, nil, .array((0..<count).map { CBOR.bytes([UInt8(truncatingIfNeeded: $0)]) })]).encoded())
        },
    ]

    /// What an OpenID4VP answer brings (openid4vp-dc-api): the response
    /// object's text, the decrypted payload, the query compared with what
    /// was disclosed, and the presentation read from the vp_token.
    static let openID4VPDimensions: [Dimension] = [
        // A "JWE" of dots is split at most six ways before it is refused.
        Dimension(name: "jweDots", base: 20_000) { events, count in
            try openID4VPEvent(events) { _, _ in ["response": String(repeating: ".", count: count)] }
        },
        // An error response's description, read and never quoted.
        Dimension(name: "walletErrorDescription", base: 20_000) { events, count in
            try openID4VPEvent(events) { _, _ in ["error": "access_denied", "error_description": String(repeating: "x", count: count)] }
        },
        // The decrypted payload's `state`, parsed beside the vp_token.
        Dimension(name: "decryptedStateLength", base: 10_000) { events, count in
            try openID4VPEvent(events) { event, key in
                let presentation = Base64.encodeURL(event.deviceResponse)
                let payload = Array(#"{"vp_token":{"mdoc":["\#(presentation)"]},"state":"\#(String(repeating: "s", count: count))"}"#.utf8)
                return ["response": try CompactJWE.seal(payload, to: key.privateKey.publicKey, keyID: key.keyID)]
            }
        },
        // Requested elements the response lacks, and disclosed ones nobody asked for: response.query.
        Dimension(name: "queryElements", base: 250) { events, count in
            var factory = events.factory
            var event = try factory.event(.openID4VPDCAPI)
            event.requestedElements = (0..<count).map { RequestedElement(namespace: "org.iso.18013.5.1", element: "e\($0)", retention: .willNotStore) }
            return event.json()
        },
        // The presentation's DeviceResponse with unknown keys, read from the vp_token.
        Dimension(name: "responseUnknownKeysOpenID4VP", base: 1_000) { events, count in
            var factory = events.factory
            let event = try factory.event(.openID4VPDCAPI)
            let response = try CBORDecoder().decode(event.deviceResponse).value
            return try factory.replacingDeviceResponse(of: event, with: response.adding(keys: count).encoded()).json()
        },
    ]

    /// A valid openid4vp-dc-api event of the test issuer whose `data.response` is `response` of the event and the merchant's key.
    static func openID4VPEvent(_ events: TestIssuer.HostileEvents,
                               _ response: (TestIssuer.GeneratedEvent, TenantKey) throws -> [String: Any]) throws -> [UInt8] {
        var factory = events.factory
        let event = try factory.event(.openID4VPDCAPI)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? [String: Any])
        var data = try #require(object["data"] as? [String: Any])
        data["response"] = try response(event, try TenantKey(factory.merchant.currentKey))
        object["data"] = data
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// An iso-device-response event of the test issuer carrying `transcript` instead of its own.
    static func isoEvent(_ events: TestIssuer.HostileEvents, transcript: [UInt8]) throws -> [UInt8] {
        var factory = events.factory
        var event = try factory.event(.isoDeviceResponse)
        event.data["sessionTranscript"] = Data(transcript).base64EncodedString()
        return event.json()
    }

    /// An apple-wallet-web event whose DeviceResponse is `edit` of a valid one, sealed to the merchant.
    static func webResponse(_ events: TestIssuer.HostileEvents, _ edit: (CBOR) -> CBOR) throws -> [UInt8] {
        var factory = events.factory
        let event = try factory.event(.appleWalletWeb)
        let response = try CBORDecoder().decode(event.deviceResponse).value
        return try factory.replacingDeviceResponse(of: event, with: edit(response).encoded()).json()
    }

    /// Every dimension, dealt alternately into the runs.
    static let runs: [Run] = {
        let all = dimensions + transcriptDimensions + openID4VPDimensions
        return (0..<2).map { run in Run(number: run + 1, of: 2, dimensions: all.indices.filter { $0 % 2 == run }.map { all[$0] }) }
    }()

    struct Run: CustomTestStringConvertible, Sendable {
        let number: Int
        let of: Int
        let dimensions: [Dimension]
        var testDescription: String { "run \(number) of \(of): \(dimensions.map(\.name).joined(separator: ", "))" }
    }

    @Test(arguments: runs)
    func costIsLinearInEachDimension(_ run: Run) throws {
        let events = try TestIssuer.HostileEvents(now: Lab.now, seed: 77)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-scaling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try events.writeConfiguration(to: directory)
        var files: [URL] = []
        for dimension in run.dimensions {
            let n = dimension.base
            for count in [n / 2, n, 2 * n, 4 * n] {
                let file = directory.appendingPathComponent("\(dimension.name)-\(count).json")
                try Data(try dimension.build(events, count)).write(to: file)
                files.append(file)
            }
        }
        let costs = try Callgrind.instructionsPerEvent(config: config, at: events.now, events: files, scratch: directory)
        #expect(costs.count == 4 * run.dimensions.count)
        for (index, dimension) in run.dimensions.enumerated() where costs.count >= 4 * (index + 1) {
            // The n/2 event pays what the dimension's first event does once.
            let measured = Array(costs[(4 * index + 1)..<(4 * index + 4)])
            let n = dimension.base
            let first = Double(measured[1] - measured[0]), second = Double(measured[2] - measured[1])
            print("scaling \(dimension.name): n = \(n), \(2 * n), \(4 * n): instructions \(measured), growth \(String(format: "%.2f", second / first))")
            #expect(first > 0, "\(dimension.name): \(measured)")
            #expect(second / first <= Self.maximumGrowth,
                    "\(dimension.name): doubling \(2 * n) to \(4 * n) added \(Int(second)) instructions, \(n) more added \(Int(first)): \(measured)")
        }
    }
}

extension CBOR {
    /// A map with `count` more text keys no reader knows.
    fileprivate func adding(keys count: Int) -> CBOR {
        guard case .map(let entries) = self else { return self }
        return .map(entries + (0..<count).map { CBOR.MapEntry(.text("k\($0)"), 0) })
    }

    /// A DeviceResponse with its first document edited.
    fileprivate func editingDocument(_ edit: (CBOR) -> CBOR) -> CBOR {
        guard case .array(let documents)? = self["documents"], let first = documents.first else { return self }
        return replacing("documents", with: .array([edit(first)] + documents.dropFirst()))
    }
}

/// `veridoc` under callgrind: the instructions one run executes.
enum Callgrind {
    static let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { valgrind != nil }

    static let binary = Binaries.veridoc

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What one `veridoc verify` run spends on each of `events`, in order,
    /// from reading it to reading the next: callgrind dumps its counts (and
    /// starts again from 0) each time the command reads an event. A run's
    /// start-up is paid once instead of once per event.
    static func instructionsPerEvent(config: URL, at time: Date, events: [URL], scratch: URL) throws -> [Int] {
        let run = try verify(config: config, at: time, events: events, dumpingAfter: [], scratch: scratch)
        // Part 0 is the start-up; parts 1… are the events.
        guard run.parts.count == events.count + 1 else { throw Failure(description: "\(run.parts.count) callgrind parts for \(events.count) events") }
        return Array(run.parts.dropFirst())
    }

    /// `veridoc verify --json` of `events` under callgrind, its counts dumped
    /// (and started again from 0) before each event is read, and after each
    /// call of the functions `dumpingAfter` names (mangled names, `*` a
    /// wildcard; callgrind keeps one of --dump-before and --dump-after per
    /// function): each part's instructions in order, and what the command
    /// printed. The first event is read once more at the end so that the last
    /// one's part holds no exit; the part from there to the exit is left out,
    /// its verdict is the output's last line.
    static func verify(config: URL, at time: Date, events: [URL], dumpingAfter functions: [String], scratch: URL) throws -> (parts: [Int], output: String) {
        let file = scratch.appendingPathComponent("callgrind-\(UUID().uuidString)")
        let options = ["--dump-before=$s7Veridoc13VerifyCommandO9readEvent*", "--callgrind-out-file=\(file.path)"]
            + functions.map { "--dump-after=\($0)" }
        let output = try run(options, ["verify", "--config", config.path, "--at", RFC3339.string(from: time), "--json"] + (events + events.prefix(1)).map(\.path),
                             writingTo: scratch)
        // Dumps are numbered from 1; what follows the last is the file without a number.
        var paths: [String] = []
        while FileManager.default.fileExists(atPath: "\(file.path).\(paths.count + 1)") { paths.append("\(file.path).\(paths.count + 1)") }
        let parts = try (paths + [file.path]).map { path in
            let text = try String(contentsOfFile: path, encoding: .utf8)
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals: ") }), let total = Int(line.dropFirst("totals: ".count)) else {
                throw Failure(description: "no totals in callgrind part \(path)")
            }
            return total
        }
        return (Array(parts.dropLast()), output)
    }

    /// Runs the command under callgrind, its output and errors in files of
    /// `directory` (files, not pipes: nothing has to read one while the other
    /// fills); its standard output.
    private static func run(_ options: [String], _ arguments: [String], writingTo directory: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: valgrind!)
        // Inline debug info only names functions in a profile nobody reads here; not reading it makes each run about a tenth faster.
        process.arguments = ["--tool=callgrind", "--read-inline-info=no"] + options + [binary.path] + arguments
        // Hash seeds otherwise differ per process, and with them the work of every Set and Dictionary.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"]) { $1 }
        let name = UUID().uuidString
        let output = directory.appendingPathComponent("\(name).out"), errors = directory.appendingPathComponent("\(name).err")
        for file in [output, errors] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let outputHandle = try FileHandle(forWritingTo: output), errorHandle = try FileHandle(forWritingTo: errors)
        defer { try? outputHandle.close(); try? errorHandle.close() }
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        try process.run()
        process.waitUntilExit()
        let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        // Its exit status is the verdicts' (a rejected event is 1); a run that counted nothing failed.
        guard text.contains("Collected :") else {
            throw Failure(description: "callgrind exited \(process.terminationStatus): \(text.suffix(500))")
        }
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}
