import Foundation
import HTTPService
import MDoc
import Revocation
import StatusFetch
import TestIssuer
import Verification

/// Section 8: what revocation checking costs (`veridoc-dev bench`): the
/// status check per event with the list cached, as a ratio to the same
/// events without a reference, in one run; a cold 2^20-entry 8-bit list
/// fetched, inflated and indexed; many queries waiting on one cold list;
/// and a re-check of retained references. The lists come from an HTTP
/// server in this process on loopback.
public struct StatusBench {
    public struct Options: Sendable {
        public var events: Int
        public var rounds: Int
        public var waiting: Int
        public var retained: Int

        public static let full = Options(events: 2_000, rounds: 3, waiting: 10_000, retained: 10_000)
        public static let quick = Options(events: 200, rounds: 1, waiting: 1_000, retained: 1_000)
    }

    let options: Options
    let progress: @Sendable (String) -> Void

    public init(options: Options, progress: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.progress = progress
    }

    public func run() throws -> BenchReport.Status {
        let now = Date()
        var factory = try TestIssuer.EventFactory(now: now, seed: 4343)
        let signer = try factory.authority.issuingListSigner(now: now)
        let lists = try ListHost()
        defer { lists.stop() }
        func token(_ content: TestIssuer.ListPublisher.Content, path: String) throws -> [UInt8] {
            let issued = Int64(now.timeIntervalSince1970)
            let publisher = TestIssuer.ListPublisher(kind: .statusList, content: content, subject: lists.url(path), issuedAt: issued - 60, expiresAt: issued + 86_400)
            return try publisher.signed(by: signer.key, chain: [signer.certificate])
        }
        let verifier = Verifier(directory: TenantDirectory([try factory.merchant.tenant(trusting: [factory.authority.iaca])]))
        func service() -> StatusService {
            StatusService(configuration: StatusService.Configuration(fetch: FetchPolicy(allowInsecure: true, connectTimeout: 30, totalTimeout: 120)))
        }

        // 1. Warm cache: the same events with and without a reference, alternated in rounds, best of each.
        progress("status row: generating \(options.events) events with and \(options.events) without a status reference …")
        lists.publish("/warm", try token(.statuses(bits: 1, [UInt8](repeating: 0, count: 1 << 16)), path: "/warm"))
        var withReference: [[UInt8]] = [], without: [[UInt8]] = []
        for index in 0..<options.events {
            var options = TestIssuer.EventOptions()
            options.status = MSOStatus(statusList: .init(index: UInt64(index), uri: lists.url("/warm")))
            withReference.append(try factory.event(.isoDeviceResponse, options: options).json())
            without.append(try factory.event(.isoDeviceResponse).json())
        }
        let warm = service()
        defer { warm.stop() }
        let listed = warmRatio(withReference, without, verifier: verifier, verifierWithout: verifier, service: warm, what: "status list")
        let verifiedWith = Self.verify(withReference[...], verifier: verifier, service: warm)

        // 1b. The same with CRLs instead: an authority whose document signer
        // and IACA both name one, neither listed.
        progress("status row: generating \(options.events) events whose certificates name CRLs …")
        var crlFactory = factory
        crlFactory.authority = try factory.authority.namingRevocationLists(iaca: [lists.url("/iaca.crl")], documentSigner: [lists.url("/ds.crl")])
        for path in ["/iaca.crl", "/ds.crl"] {
            lists.publish(path, try crlFactory.authority.revocationList(thisUpdate: now - 600, nextUpdate: now + 86_400), mediaType: "application/pkix-crl")
        }
        let crlVerifier = Verifier(directory: TenantDirectory([try crlFactory.merchant.tenant(trusting: [crlFactory.authority.iaca])]))
        let withCRLs = try (0..<options.events).map { _ in try crlFactory.event(.isoDeviceResponse).json() }
        // Compared with certificates made the same way that name no CRL, under their own tenant.
        var plainFactory = factory
        plainFactory.authority = try factory.authority.namingRevocationLists()
        let plainVerifier = Verifier(directory: TenantDirectory([try plainFactory.merchant.tenant(trusting: [plainFactory.authority.iaca])]))
        let withoutCRLs = try (0..<options.events).map { _ in try plainFactory.event(.isoDeviceResponse).json() }
        let crls = warmRatio(withCRLs, withoutCRLs, verifier: crlVerifier, verifierWithout: plainVerifier, service: warm, what: "CRLs")
        let verifiedWithCRLs = Self.verify(withCRLs[...], verifier: crlVerifier, service: warm)

        // 2. A cold 1 MB list: 2^20 entries of 8 bits, fetched, inflated and indexed.
        progress("status row: a cold 2^20-entry 8-bit list …")
        var large = [UInt8](repeating: 0, count: 1 << 20)
        for index in stride(from: 0, to: large.count, by: 997) { large[index] = 1 }
        lists.publish("/large", try token(.statuses(bits: 8, large), path: "/large"))
        let cold = service()
        defer { cold.stop() }
        var largeOptions = TestIssuer.EventOptions()
        largeOptions.status = MSOStatus(statusList: .init(index: 997 * 3 + 1, uri: lists.url("/large")))
        let largeEvent = try factory.event(.isoDeviceResponse, options: largeOptions).json()
        let rssBefore = Self.residentMegabytes()
        let coldStart = Date()
        let largeResult = Self.verify([largeEvent][...], verifier: verifier, service: cold)
        let coldMilliseconds = Date().timeIntervalSince(coldStart) * 1000
        let rssGrowth = max(0, Self.residentMegabytes() - rssBefore)

        // 3. Many queries naming one cold list: one fetch.
        progress("status row: \(options.waiting) queries waiting on one cold list …")
        lists.publish("/crowd", try token(.statuses(bits: 1, [UInt8](repeating: 0, count: options.waiting)), path: "/crowd"))
        let crowd = service()
        defer { crowd.stop() }
        guard let query = verifier.verify(eventJSON: withReference[0], at: now).pendingStatusQueries.first else {
            throw TestIssuer.FixtureError("the status row's events name no list")
        }
        let crowdQueries = (0..<options.waiting).map { index in
            StatusQuery(document: 0, reference: MSOStatus(statusList: .init(index: UInt64(index), uri: lists.url("/crowd"))),
                        documentSigner: query.documentSigner, issuingAnchor: query.issuingAnchor, policy: query.policy)
        }
        let done = DispatchGroup()
        for crowdQuery in crowdQueries {
            done.enter()
            crowd.resolve([crowdQuery], at: now) { _ in done.leave() }
        }
        done.wait()

        // 4. Re-reading retained references from a warm list, per reference.
        progress("status row: re-reading \(options.retained) retained references …")
        let retained = (0..<options.retained).map { index in
            StatusQuery(document: 0, reference: MSOStatus(statusList: .init(index: UInt64(index % (1 << 16)), uri: lists.url("/warm"))),
                        documentSigner: query.documentSigner, issuingAnchor: query.issuingAnchor, policy: query.policy)
        }
        let recheckSeconds = Self.threadCPU { _ = warm.resolve(retained, at: now) }

        return BenchReport.Status(
            events: options.events, rounds: options.rounds, warmCacheRatio: listed.ratio,
            cpuMicrosecondsPerEventWithout: listed.without * 1e6,
            cpuMicrosecondsPerEventWith: listed.with * 1e6,
            verifiedWithReference: verifiedWith,
            warmCRLRatio: crls.ratio, cpuMicrosecondsPerEventWithCRLs: crls.with * 1e6, verifiedWithCRLs: verifiedWithCRLs, coldListEntries: large.count, coldListMilliseconds: coldMilliseconds,
            coldListRSSGrowthMegabytes: rssGrowth, coldListVerdict: largeResult == 1 ? "verified" : "rejected",
            waitingQueries: options.waiting, fetchesForWaitingQueries: crowd.fetches,
            retainedReferences: options.retained, recheckMicrosecondsPerReference: recheckSeconds / Double(options.retained) * 1e6)
    }

    /// CPU per event of `checked` (each resolved against cached lists) ÷ the
    /// same of `plain`, in interleaved chunks, the order alternating, each
    /// chunk's ratio kept: on a shared machine a slow spell then falls on
    /// both sides of one ratio, and the median ignores the chunks it spoiled.
    /// Medians of the ratio and of each side's seconds per event.
    private func warmRatio(_ checked: [[UInt8]], _ plain: [[UInt8]], verifier: Verifier, verifierWithout: Verifier, service: StatusService,
                           what: String) -> (ratio: Double, with: Double, without: Double) {
        _ = Self.verify(checked.prefix(1), verifier: verifier, service: service)
        let chunk = 100
        let count = min(checked.count, plain.count)
        var ratios: [Double] = [], withTimes: [Double] = [], withoutTimes: [Double] = []
        for round in 1...options.rounds {
            progress("status row: round \(round) of \(options.rounds), \(what) cached …")
            for start in stride(from: 0, to: count, by: chunk) {
                let range = start..<min(start + chunk, count)
                var plainTime = 0.0, checkedTime = 0.0
                if (start / chunk + round) % 2 == 0 {
                    plainTime = Self.threadCPU { _ = Self.verify(plain[range], verifier: verifierWithout, service: service) }
                    checkedTime = Self.threadCPU { _ = Self.verify(checked[range], verifier: verifier, service: service) }
                } else {
                    checkedTime = Self.threadCPU { _ = Self.verify(checked[range], verifier: verifier, service: service) }
                    plainTime = Self.threadCPU { _ = Self.verify(plain[range], verifier: verifierWithout, service: service) }
                }
                ratios.append(checkedTime / plainTime)
                withTimes.append(checkedTime / Double(range.count))
                withoutTimes.append(plainTime / Double(range.count))
            }
        }
        return (Self.median(ratios), Self.median(withTimes), Self.median(withoutTimes))
    }

    /// Verifies and resolves each event as the worker does; how many were verified.
    static func verify(_ events: ArraySlice<[UInt8]>, verifier: Verifier, service: StatusService) -> Int {
        var verified = 0
        let now = Date()
        for event in events where verifier.verify(eventJSON: event, at: now).resolvingStatus(with: { service.resolve($0, at: now) }).isVerified {
            verified += 1
        }
        return verified
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// This thread's CPU seconds spent in `body`.
    static func threadCPU(_ body: () -> Void) -> Double {
        func now() -> Double {
            var spec = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
            return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
        }
        let start = now()
        body()
        return now() - start
    }

    static func residentMegabytes() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}

/// The bench's list server: tokens and CRLs by path on 127.0.0.1.
private final class ListHost: @unchecked Sendable {
    // `tokens` is guarded by `lock`.
    private let lock = NSLock()
    private var tokens: [String: (body: [UInt8], mediaType: String)] = [:]
    private var daemon: HTTPDaemon?

    init() throws {
        daemon = try HTTPDaemon(port: 0, loopbackOnly: true) { [unowned self] request in
            guard let token = self.token(request.path) else { return HTTPResponse(status: 404) }
            return HTTPResponse(status: 200, headers: [("Content-Type", token.mediaType)], body: token.body)
        }
    }

    private func token(_ path: String) -> (body: [UInt8], mediaType: String)? {
        lock.lock()
        defer { lock.unlock() }
        return tokens[path]
    }

    func publish(_ path: String, _ token: [UInt8], mediaType: String = "application/statuslist+cwt") {
        lock.lock()
        tokens[path] = (token, mediaType)
        lock.unlock()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(daemon?.port ?? 0)\(path)" }

    func stop() { daemon?.stop() }
}
