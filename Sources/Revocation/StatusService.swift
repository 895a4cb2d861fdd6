import Crypto
import Dispatch
import Foundation
import MDoc
import Settings
import StatusFetch
import StatusList
import Verification

/// Fetches, verifies and caches the revocation lists MSOs name, and answers
/// status queries from them (docs/revocation.md).
///
/// Fetches run on the service's own threads, never on the caller's: a
/// verification thread hands its queries over and is called back. One fetch
/// per list at a time, however many queries wait for it; a list is used until
/// its `ttl` (or an hour) runs out and never after its `exp`, and a failed
/// fetch is remembered briefly so that a dead server is not asked once per
/// event. Each query waits at most its tenant's `status.maxWaitSeconds`.
public final class StatusService: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var fetch: FetchPolicy
        public var limits: ListLimits
        public var maxCachedLists: Int
        /// How far a list's `iat` may lie in the future.
        public var allowedClockSkew: TimeInterval = 300
        /// How long a failed fetch answers for its list before it is tried again.
        public var failureRetryAfter: TimeInterval = 10
        /// More than one host's share (`fetch.perHostConcurrency`): a slow
        /// or silent issuer holds at most its share, and the other hosts'
        /// lists are still fetched.
        public var fetchThreads: Int = 16
        /// Memory the cached lists may hold together; the least recently used beyond it are dropped.
        public var maxCacheBytes = 512 << 20
        /// How long a CRL is used before it is fetched again (never past its `nextUpdate`).
        public var crlRefresh: TimeInterval = CachedList.defaultTimeToLive
        /// Told of every fetch and lookup, for metrics; never of a URI or an index.
        public var observer = StatusObserver()
        /// Lists other processes fetched (the workers' database); nil: this process's memory only.
        public var sharedStore: (any SharedListStore)?

        public init(fetch: FetchPolicy, limits: ListLimits = ListLimits(), maxCachedLists: Int = 1_000) {
            self.fetch = fetch
            self.limits = limits
            self.maxCachedLists = maxCachedLists
        }

        /// The deployment's `statusLists` section, `caFile` already resolved.
        public init(_ settings: StatusListSettings, caFile: String?) {
            fetch = FetchPolicy(
                allowInsecure: settings.http.allowInsecure, connectTimeout: Double(settings.http.connectTimeoutSeconds),
                totalTimeout: Double(settings.http.timeoutSeconds), maxBodyBytes: settings.http.maxResponseBytes,
                perHostConcurrency: settings.perHostConcurrency, caFile: caFile)
            limits = ListLimits(maxTokenBytes: settings.http.maxResponseBytes, maxListBytes: settings.maxListBytes)
            maxCachedLists = settings.maxCachedLists
            fetchThreads = settings.fetchThreads
            crlRefresh = TimeInterval(settings.crlRefreshSeconds)
            maxCacheBytes = settings.maxCacheBytes
        }
    }

    let configuration: Configuration
    private let fetcher: StatusFetcher
    /// Guards everything below it.
    private let condition = NSCondition()
    private var lists: [ListKey: CachedList] = [:]
    /// The sum of the cached lists' `memoryBytes`.
    private var cachedBytes = 0
    /// Counts uses, for each list's `lastUse` (the cache's order).
    private var useClock: UInt64 = 0
    private var failures: [ListKey: (cause: StatusUndetermined, until: Date)] = [:]
    /// Lists being fetched or queued for a fetch, with who waits for each.
    private var flights: [ListKey: [@Sendable (Fetched) -> Void]] = [:]
    private var queued: [ListKey] = []
    /// The verification time of the query that asked for each queued list: what its token must be current at.
    private var neededAt: [ListKey: Date] = [:]
    /// Each queued or fetching list's host, parsed once when it was queued.
    private var hosts: [ListKey: String] = [:]
    /// Fetches under way per host: a fetch thread takes a list whose host has room.
    private var fetchingByHost: [String: Int] = [:]
    /// Lists a document's issuer accepted, for the fetch threads to hand to the shared store.
    private var toShare: [(ListKey, CachedList)] = []
    private var stopping = false
    private var threads: [Thread] = []
    /// Fetches made, for tests and the benchmark: one per list however many queries wait.
    private var fetchCount = 0

    enum Fetched: Sendable {
        case list(CachedList)
        case failed(StatusUndetermined)
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        fetcher = StatusFetcher(policy: configuration.fetch)
        for index in 0..<max(1, configuration.fetchThreads) {
            // A strong reference: the threads keep the service until `stop` lets them end.
            let thread = Thread { [self] in self.runFetches() }
            thread.name = "status-fetch-\(index)"
            threads.append(thread)
        }
        threads.forEach { $0.start() }
    }

    /// Stops the fetch threads once the fetches under way end; queries still
    /// waiting are undetermined. Its owner calls it: until then the threads
    /// hold the service.
    public func stop() {
        condition.lock()
        stopping = true
        let abandoned = flights
        flights = [:]
        queued = []
        neededAt = [:]
        hosts = [:]
        condition.broadcast()
        condition.unlock()
        let cause = StatusUndetermined(step: "fetch", detail: "the status service stopped")
        for waiters in abandoned.values { waiters.forEach { $0(.failed(cause)) } }
    }

    /// Age of the oldest list held, 0 when none.
    public func oldestListAge(now: Date = Date()) -> TimeInterval {
        condition.lock()
        defer { condition.unlock() }
        return lists.values.map { now.timeIntervalSince($0.fetchedAt) }.max() ?? 0
    }

    /// Fetches made so far.
    public var fetches: Int {
        condition.lock()
        defer { condition.unlock() }
        return fetchCount
    }

    /// Answers `queries` (one answer each, in order) on a thread of the
    /// service's, or on the caller's when every list is cached (then without
    /// the waiting machinery: `cachedAnswers`): `completion` is called exactly once.
    public func resolve(_ queries: [StatusQuery], at time: Date, completion: @escaping @Sendable ([CredentialStatus]) -> Void) {
        if let answers = cachedAnswers(queries, at: time) { return completion(answers) }
        resolveWaiting(queries, at: time, completion: completion)
    }

    /// `resolve` past the cache: each list looked up, fetched where it must
    /// be, and the answers completed when the last comes or the wait runs out.
    private func resolveWaiting(_ queries: [StatusQuery], at time: Date, completion: @escaping @Sendable ([CredentialStatus]) -> Void) {
        let slots = queries.map(Self.references)
        let resolution = Resolution(slots: slots, completion: completion)
        guard !queries.isEmpty else { return resolution.finish() }
        for (queryIndex, query) in queries.enumerated() {
            for (referenceIndex, reference) in slots[queryIndex].enumerated() {
                let fill: @Sendable (Fetched) -> Void = { [self] fetched in
                    let answer: CredentialStatus
                    switch fetched {
                    case .failed(let cause):
                        answer = .undetermined(cause)
                    case .list(let list):
                        answer = reference.answer(list, query, time, configuration.allowedClockSkew)
                        judged(list, under: reference.key, answer)
                    }
                    resolution.fill(queryIndex, referenceIndex, answer)
                }
                if case .unlocatable(let cause) = reference.named {
                    fill(.failed(cause))
                } else if let ready = lookup(reference.key, for: time, waiter: fill) {
                    fill(ready)
                }
            }
        }
        let wait = queries.map { TimeInterval($0.policy.maxWaitSeconds) }.min() ?? 10
        if !resolution.isFinished {
            DispatchQueue.global().asyncAfter(deadline: .now() + wait) {
                resolution.expire(StatusUndetermined(step: "wait", detail: "the list could not be had within \(Int(wait)) s (status.maxWaitSeconds)"))
            }
        }
    }

    /// Fetches again, ahead of need, every cached list that answered a query
    /// within the last `horizon` and must be refreshed within the next: a
    /// list in use is renewed before its `ttl` runs out, so events find it
    /// cached instead of waiting. Returns how many fetches it queued.
    @discardableResult
    public func prefetch(now: Date = Date(), horizon: TimeInterval) -> Int {
        condition.lock()
        defer { condition.unlock() }
        var queuedNow = 0
        for (key, list) in lists where flights[key] == nil && list.refreshAt < now + horizon {
            guard let used = list.lastUsedAt, now.timeIntervalSince(used) < horizon else { continue }
            enqueue(key, neededAt: now, waiters: [])
            queuedNow += 1
        }
        if queuedNow > 0 { condition.broadcast() }
        return queuedNow
    }

    /// The answers, when every list the queries name is cached and fresh,
    /// read on the caller's thread; nil as soon as one is not (then `resolve`
    /// waits for it), or when an answer would drop its list (`judged`).
    func cachedAnswers(_ queries: [StatusQuery], at time: Date) -> [CredentialStatus]? {
        let now = Date()
        var answers: [CredentialStatus] = []
        answers.reserveCapacity(queries.count)
        var hits = 0
        // One query's answer from one list, or nil when it must wait.
        func read(_ reference: Reference, _ query: StatusQuery) -> CredentialStatus? {
            condition.lock()
            let list = freshList(reference.key, now: now, for: time)
            condition.unlock()
            guard let list else { return nil }
            let answer = reference.answer(list, query, time, configuration.allowedClockSkew)
            guard !Self.dropsList(answer, list) else { return nil }
            hits += 1
            return answer
        }
        for query in queries {
            // The two named lists read in place, not through `references` (an array per event on the hot path).
            var statusList: CredentialStatus?, identifierList: CredentialStatus?
            if let list = query.reference.statusList {
                guard let answer = read(Reference(.statusList(list), for: query), query) else { return nil }
                statusList = answer
            }
            if let list = query.reference.identifierList {
                guard let answer = read(Reference(.identifierList(list), for: query), query) else { return nil }
                identifierList = answer
            }
            var all = [statusList, identifierList].compactMap { $0 }
            for certificate in query.certificateLists {
                let reference = Reference(certificate, for: query)
                if case .unlocatable(let cause) = reference.named {
                    all.append(.undetermined(cause))
                    continue
                }
                guard let answer = read(reference, query) else { return nil }
                all.append(answer)
            }
            answers.append(CredentialStatus.combining(all))
        }
        for _ in 0..<hits { configuration.observer.lookedUp(true) }
        return answers
    }

    /// The cached list under `key` if it may answer now for `time`, counted
    /// as a use (for `prefetch` and the cache's order). `condition` is held.
    private func freshList(_ key: ListKey, now: Date, for time: Date) -> CachedList? {
        guard let list = lists[key], list.isFresh(now: now, for: time) else { return nil }
        useClock += 1
        list.lastUse = useClock
        list.lastUsedAt = now
        return list
    }

    /// Queues a fetch of `key` for `waiters`, its token to be current at `time`. `condition` is held.
    private func enqueue(_ key: ListKey, neededAt time: Date, waiters: [@Sendable (Fetched) -> Void]) {
        flights[key] = waiters
        queued.append(key)
        neededAt[key] = time
        hosts[key] = key.host
    }

    /// Whether `answer` drops `list` (`judged`): a signer or signature no
    /// document's issuer has accepted.
    private static func dropsList(_ answer: CredentialStatus, _ list: CachedList) -> Bool {
        guard case .undetermined(let cause) = answer else { return false }
        return (cause.step == "signer" || cause.step == "signature" || cause.step == "crl_signer") && !list.wasAccepted
    }

    /// `resolve`, waiting for the answers.
    public func resolve(_ queries: [StatusQuery], at time: Date) -> [CredentialStatus] {
        if let answers = cachedAnswers(queries, at: time) { return answers }
        let done = DispatchSemaphore(value: 0)
        let box = AnswerBox()
        resolveWaiting(queries, at: time) { answers in
            box.answers = answers
            done.signal()
        }
        done.wait()
        return box.answers
    }

    /// A list whose signer no document's issuer has accepted, or whose
    /// signature is not its signer's, is dropped and answers as a failed
    /// fetch until the retry: a token no one vouches for never keeps the
    /// issuer's own list away for its `ttl`. (One that an issuer accepted
    /// stays, whatever another issuer's document names.) One accepted is
    /// offered to the shared store once.
    private func judged(_ list: CachedList, under key: ListKey, _ answer: CredentialStatus) {
        if Self.dropsList(answer, list), case .undetermined(let cause) = answer {
            condition.lock()
            if lists[key] === list {
                remove(key)
                failures[key] = (cause, Date().addingTimeInterval(configuration.failureRetryAfter))
            }
            condition.unlock()
        } else if configuration.sharedStore != nil, list.wasAccepted, list.takeStoreOffer() {
            condition.lock()
            toShare.append((key, list))
            condition.signal()
            condition.unlock()
        }
    }

    /// What is cached for `key` now, or nil after registering `waiter` for
    /// the fetch (starting one if none is under way).
    private func lookup(_ key: ListKey, for time: Date, waiter: @escaping @Sendable (Fetched) -> Void) -> Fetched? {
        let now = Date()
        condition.lock()
        defer { condition.unlock() }
        if let list = freshList(key, now: now, for: time) {
            configuration.observer.lookedUp(true)
            return .list(list)
        }
        configuration.observer.lookedUp(false)
        if let failure = failures[key], now < failure.until { return .failed(failure.cause) }
        if stopping { return .failed(StatusUndetermined(step: "fetch", detail: "the status service stopped")) }
        if flights[key] == nil {
            enqueue(key, neededAt: time, waiters: [waiter])
            condition.signal()
        } else {
            flights[key]!.append(waiter)
        }
        return nil
    }

    private func runFetches() {
        while true {
            condition.lock()
            var next: Int?
            while !stopping {
                if !toShare.isEmpty { break }
                next = queued.firstIndex { (fetchingByHost[hosts[$0] ?? ""] ?? 0) < configuration.fetch.perHostConcurrency }
                if next != nil { break }
                condition.wait()
            }
            if stopping {
                condition.unlock()
                return
            }
            if !toShare.isEmpty {
                let (key, list) = toShare.removeFirst()
                condition.unlock()
                configuration.sharedStore?.save(key.source, uri: key.uriText, list.shared)
                continue
            }
            let key = queued.remove(at: next!)
            let time = neededAt.removeValue(forKey: key) ?? Date()
            let host = hosts.removeValue(forKey: key) ?? ""
            let previous = lists[key]
            fetchCount += 1
            fetchingByHost[host, default: 0] += 1
            condition.unlock()

            let (fetched, outcome) = fetch(key, previous: previous, neededAt: time)
            configuration.observer.fetched(outcome)

            condition.lock()
            fetchingByHost[host, default: 1] -= 1
            if fetchingByHost[host] == 0 { fetchingByHost[host] = nil }
            let waiters = flights.removeValue(forKey: key) ?? []
            switch fetched {
            case .list(let list):
                failures[key] = nil
                store(list, under: key)
                // Fetched for a query: in use. (A prefetch alone keeps the last use.)
                if !waiters.isEmpty { list.lastUsedAt = Date() }
            case .failed(let cause):
                failures[key] = (cause, Date().addingTimeInterval(configuration.failureRetryAfter))
                if failures.count > configuration.maxCachedLists { failures = failures.filter { $0.value.until > Date() } }
            }
            // Another thread may now take a list of this host.
            condition.broadcast()
            condition.unlock()
            waiters.forEach { $0(fetched) }
        }
    }

    private func store(_ list: CachedList, under key: ListKey) {
        // A refetched list keeps its predecessor's last use (a prefetch alone is no use).
        if list.lastUsedAt == nil { list.lastUsedAt = lists[key]?.lastUsedAt }
        remove(key)
        lists[key] = list
        cachedBytes += list.memoryBytes
        useClock += 1
        list.lastUse = useClock
        // The least recently used go first, never the list just stored.
        while lists.count > configuration.maxCachedLists || (cachedBytes > configuration.maxCacheBytes && lists.count > 1),
              let oldest = lists.filter({ $0.key != key }).min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            remove(oldest)
        }
    }

    /// Drops the list under `key`, if any. `condition` is held.
    private func remove(_ key: ListKey) {
        if let gone = lists.removeValue(forKey: key) { cachedBytes -= gone.memoryBytes }
    }

    /// Bytes the cached lists hold (for tests and metrics).
    public var cacheBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return cachedBytes
    }

    /// One GET (conditional when a list is held), then the token read
    /// strictly; with the fetch's result as metrics name it.
    private func fetch(_ key: ListKey, previous: CachedList?, neededAt time: Date) -> (Fetched, String) {
        var previous = previous
        if previous == nil, let store = configuration.sharedStore, let kept = store.load(key.source, uri: key.uriText),
           case .success(let content) = read(kept.token, for: key, at: time) {
            let list = CachedList(content, tokenBytes: kept.token, fetchedAt: kept.fetchedAt, etag: kept.etag, lastModified: kept.lastModified,
                                  crlRefresh: configuration.crlRefresh)
            // Another process fetched it within its ttl: no request at all.
            if Date() < list.refreshAt { return (.list(list), "shared") }
            previous = list
        }
        var fetched = fetchList(key, previous: previous, neededAt: time)
        // A list older than the one already held is a replay (a CRL may
        // come over plain http): the answer is undetermined until the
        // server sends one at least as new.
        if case .list(let list) = fetched, let previous, list.issuedAt < previous.issuedAt {
            let step = key.source == .certificateRevocationList ? "crl_time" : "iat"
            fetched = .failed(StatusUndetermined(step: step, detail: "the server sent an older list than the one already held"))
        }
        switch fetched {
        case .list(let list) where list.revalidated: return (fetched, "not_modified")
        case .list: return (fetched, "fetched")
        case .failed(let cause): return (fetched, cause.step)
        }
    }

    private func fetchList(_ key: ListKey, previous: CachedList?, neededAt time: Date) -> Fetched {
        let request = FetchRequest(url: key.uriText, accept: key.source.mediaType, ifNoneMatch: previous?.etag, ifModifiedSince: previous?.lastModified,
                                   allowsPlainHTTP: key.source == .certificateRevocationList)
        switch fetcher.fetch(request) {
        case .failure(let error):
            return .failed(StatusUndetermined(error))
        case .success(.notModified):
            guard let previous else { return .failed(StatusUndetermined(step: "http_status", detail: "HTTP 304 to an unconditional request")) }
            // Confirmed current by its server, but kept only while it still holds at the time that asked.
            if let stale = stillCurrentProblem(previous, at: time) { return .failed(stale) }
            return .list(previous.confirmed(at: Date()))
        case .success(.fetched(let body, let contentType, let etag, let lastModified, _)):
            // The server's own words stay out of details (it chose them).
            if let contentType, !Self.accepts(contentType, for: key.source) {
                return .failed(StatusUndetermined(step: "media_type", detail: "the server sent another media type than \(key.source.mediaType)"))
            }
            switch read(body, for: key, at: time) {
            case .success(let content):
                return .list(CachedList(content, tokenBytes: body, fetchedAt: Date(), etag: etag, lastModified: lastModified, crlRefresh: configuration.crlRefresh))
            case .failure(let cause): return .failed(cause)
            }
        }
    }

    /// Why a held list no longer holds at `time`; nil when it does.
    private func stillCurrentProblem(_ list: CachedList, at time: Date) -> StatusUndetermined? {
        switch list.content {
        case .token(let token):
            do {
                try token.checkValidity(at: time, allowedClockSkew: configuration.allowedClockSkew)
                return nil
            } catch {
                return StatusUndetermined(error)
            }
        case .crl(let crl):
            return time < crl.nextUpdate ? nil : StatusUndetermined(step: "crl_time", detail: "the CRL is past its nextUpdate")
        }
    }

    /// The bytes read as what `key` names and admitted (a token by `admit`, a CRL current at `time`), or why not.
    private func read(_ bytes: [UInt8], for key: ListKey, at time: Date) -> Result<CachedList.Content, StatusUndetermined> {
        switch key.source {
        case .token(let kind):
            do {
                let token = try ListToken(bytes: bytes, kind: kind, limits: configuration.limits)
                try Self.admit(token, for: key, at: time, allowedClockSkew: configuration.allowedClockSkew)
                return .success(.token(token))
            } catch {
                return .failure(StatusUndetermined(error))
            }
        case .certificateRevocationList:
            guard bytes.count <= configuration.limits.maxTokenBytes else {
                return .failure(StatusUndetermined(step: "too_large", detail: "the CRL has more than \(configuration.limits.maxTokenBytes) bytes"))
            }
            let crl: CertificateRevocationList
            do {
                crl = try CertificateRevocationList(der: bytes)
            } catch {
                return .failure(StatusUndetermined(step: "crl", detail: "not a CRL Veridoc can use: \(Self.describe(error))"))
            }
            // Its signer is each certificate's issuer, checked per query (`ListAnswer.certificate`).
            guard time < crl.nextUpdate else { return .failure(StatusUndetermined(step: "crl_time", detail: "the CRL is past its nextUpdate")) }
            return .success(.crl(crl))
        }
    }

    private static func describe(_ error: CryptoError) -> String {
        switch error {
        case .malformedEncoding(let what): "malformed \(what)"
        case .unsupported(let what): "\(what) is not supported"
        default: "\(error)"
        }
    }

    /// What a token must be to be kept at all, whoever asks: the list the URI
    /// names (`sub`), current at the verification time that asked for it (a
    /// list already past its `exp` is a failed fetch, not a list to fetch
    /// again for every event), and signed by the
    /// certificate its own `x5chain` names. Whether that signer may speak for
    /// a document is each query's (`ListSignerRule`).
    static func admit(_ token: ListToken, for key: ListKey, at time: Date, allowedClockSkew: TimeInterval) throws(StatusListError) {
        try token.checkSubject(key.uriText)
        try token.checkValidity(at: time, allowedClockSkew: allowedClockSkew)
        if let leaf = token.signerChain.first { try token.verifySignature(by: leaf) }
    }

    /// The Content-Type a list may come with: its own media type, or the
    /// generic CWT and binary types servers fall back to. A JSON or JWT
    /// answer is the wrong format, whatever its bytes.
    static func accepts(_ contentType: String, for source: ListSource) -> Bool {
        let name = mediaTypeName(contentType)
        switch source {
        case .token(let kind): return name == kind.mediaType || name == "application/cwt" || name == "application/octet-stream"
        // RFC 5280 §4.2.1.13 names application/pkix-crl; older servers send the PKCS #7 or x509 names.
        case .certificateRevocationList:
            return ["application/pkix-crl", "application/x-pkcs7-crl", "application/x-x509-crl", "application/octet-stream"].contains(name)
        }
    }

    /// The media type without parameters, lowercased.
    static func mediaTypeName(_ contentType: String) -> String {
        let name = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return name.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The lists one query names: its status list and its identifier list, each when present.
    static func references(_ query: StatusQuery) -> [Reference] {
        var references: [Reference] = []
        if let list = query.reference.statusList { references.append(Reference(.statusList(list), for: query)) }
        if let list = query.reference.identifierList { references.append(Reference(.identifierList(list), for: query)) }
        references += query.certificateLists.map { Reference($0, for: query) }
        return references
    }

    /// One list a query names, and how it is read.
    struct Reference: Sendable {
        enum Named: Sendable {
            case statusList(MSOStatus.StatusListReference)
            case identifierList(MSOStatus.IdentifierListReference)
            case certificate(CertificateListReference, uri: String)
            /// A certificate that names CRLs none of which can be fetched: answered at once.
            case unlocatable(StatusUndetermined)
        }

        let named: Named
        let key: ListKey

        /// One of the lists `query` names, keyed by whose it must be: a
        /// token the document's IACA's, a CRL its certificate's issuer's.
        init(_ named: Named, for query: StatusQuery) {
            self.named = named
            key = switch named {
            case .statusList(let list): ListKey(.statusList, list.uri, issuer: query.issuingAnchor.sha256Fingerprint)
            case .identifierList(let list): ListKey(.identifierList, list.uri, issuer: query.issuingAnchor.sha256Fingerprint)
            case .certificate(let reference, let uri): ListKey(.certificateRevocationList, uri, issuer: reference.issuer.sha256Fingerprint)
            case .unlocatable: ListKey(.certificateRevocationList, "", issuer: [])
            }
        }

        /// The CRL a certificate of `query`'s path names, or why it names none that can be fetched.
        init(_ certificate: CertificateListReference, for query: StatusQuery) {
            switch certificate.location {
            case .success(let uri): self.init(.certificate(certificate, uri: uri), for: query)
            case .failure(let cause): self.init(.unlocatable(cause), for: query)
            }
        }

        func answer(_ list: CachedList, _ query: StatusQuery, _ time: Date, _ skew: TimeInterval) -> CredentialStatus {
            switch named {
            case .statusList(let reference): ListAnswer.statusList(reference, in: list, for: query, at: time, allowedClockSkew: skew)
            case .identifierList(let reference): ListAnswer.identifierList(reference, in: list, for: query, at: time, allowedClockSkew: skew)
            case .certificate(let reference, let uri): ListAnswer.certificate(reference, uri: uri, in: list, at: time, allowedClockSkew: skew)
            case .unlocatable(let cause): .undetermined(cause)
            }
        }
    }
}

/// What the service tells its owner's metrics: each fetch's result (`fetched`,
/// `not_modified`, or the step that failed) and whether a lookup was cached.
public struct StatusObserver: Sendable {
    public var fetched: @Sendable (String) -> Void
    public var lookedUp: @Sendable (_ hit: Bool) -> Void

    public init(fetched: @escaping @Sendable (String) -> Void = { _ in }, lookedUp: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.fetched = fetched
        self.lookedUp = lookedUp
    }
}

extension StatusUndetermined {
    init(_ error: FetchError) {
        let step: String = switch error {
        case .httpStatus: "http_status"
        case .tooLarge: "too_large"
        default: "fetch"
        }
        self.init(step: step, detail: error.detail)
    }
}

/// The answers of one `resolve` call as they come in, completed once: when
/// the last arrives, or when the wait runs out (the rest undetermined).
private final class Resolution: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [[CredentialStatus?]]
    private var remaining: Int
    private var finished = false
    private let completion: @Sendable ([CredentialStatus]) -> Void

    init(slots: [[StatusService.Reference]], completion: @escaping @Sendable ([CredentialStatus]) -> Void) {
        answers = slots.map { [CredentialStatus?](repeating: nil, count: $0.count) }
        remaining = slots.reduce(0) { $0 + $1.count }
        self.completion = completion
    }

    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    func fill(_ query: Int, _ reference: Int, _ answer: CredentialStatus) {
        lock.lock()
        guard !finished, answers[query][reference] == nil else { return lock.unlock() }
        answers[query][reference] = answer
        remaining -= 1
        let done = remaining == 0
        lock.unlock()
        if done { finish() }
    }

    func expire(_ cause: StatusUndetermined) {
        lock.lock()
        answers = answers.map { slots in slots.map { $0 ?? .undetermined(cause) } }
        remaining = 0
        lock.unlock()
        finish()
    }

    func finish() {
        lock.lock()
        guard !finished else { return lock.unlock() }
        finished = true
        let combined = answers.map { CredentialStatus.combining($0.compactMap { $0 }) }
        lock.unlock()
        completion(combined)
    }
}

private final class AnswerBox: @unchecked Sendable {
    var answers: [CredentialStatus] = []
}
