import CCurl
import HTTPClient

/// curl_global_init must run once before any other curl call and is not
/// thread-safe in every build; a global's initializer runs exactly once,
/// whichever thread gets there first.
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// Fetches revocation data (Token Status Lists, ISO 18013-5 identifier
/// lists, CRLs) from the URLs credentials name, under a strict `FetchPolicy`.
///
/// Each call has its own curl easy handle, made and cleaned up inside it.
/// Redirects are followed here rather than by curl, one hop at a time, so
/// that each hop's URL is checked by the same rules as the first one, each
/// hop takes its own host's connection slot, and a redirect that breaks a
/// rule is reported as that rule.
public final class StatusFetcher: Sendable {
    public let policy: FetchPolicy
    private let limiter: HostLimiter

    public init(policy: FetchPolicy) {
        self.policy = policy
        limiter = HostLimiter(limit: policy.perHostConcurrency)
        _ = curlGlobalInit
    }

    /// Blocking GET; within `policy.totalTimeout` whatever the server does.
    /// 2xx → `.fetched`; 304 to a conditional request → `.notModified`;
    /// any other status → `.httpStatus`.
    public func fetch(_ request: FetchRequest) -> Result<FetchResponse, FetchError> {
        var policy = self.policy
        policy.permitsPlainHTTP = request.allowsPlainHTTP
        let deadline = ContinuousClock.now + .milliseconds(Self.milliseconds(policy.totalTimeout))
        guard curlGlobalInit == CURLE_OK else { return .failure(.other(FetchError.curlName(curlGlobalInit))) }
        var headers: [String] = []
        for (name, value) in [("Accept", request.accept), ("If-None-Match", request.ifNoneMatch), ("If-Modified-Since", request.ifModifiedSince)] {
            guard let value, !value.isEmpty else { continue }
            // A CR or LF would let a value (an ETag the server chose) write headers of its own.
            guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7f }) else { return .failure(.malformedHeader) }
            headers.append("\(name): \(value)")
        }
        let conditional = headers.contains { $0.hasPrefix("If-") }
        var url: FetchURL
        switch FetchURL.check(request.url, policy: policy, isRedirect: false) {
        case .success(let checked): url = checked
        case .failure(let error): return .failure(error)
        }

        // Everything below is released in one place, in this order: the easy
        // handle first (it refers to the rest), then the header list and the
        // callbacks' context.
        var headerList: UnsafeMutablePointer<curl_slist>?
        let transfer = Unmanaged.passRetained(Transfer(policy: policy))
        let easy = curl_easy_init()
        defer {
            if let easy { curl_easy_cleanup(easy) }
            curl_slist_free_all(headerList)
            transfer.release()
        }
        guard let easy else { return .failure(.other("CURLE_FAILED_INIT")) }
        for header in headers {
            guard let appended = curl_slist_append(headerList, header) else { return .failure(.other("CURLE_OUT_OF_MEMORY")) }
            headerList = appended
        }
        if let error = configure(easy, policy: policy, headers: headerList, context: transfer.toOpaque()) { return .failure(error) }

        let context = transfer.takeUnretainedValue()
        var redirects = 0
        while true {
            guard limiter.acquire(url.hostKey, before: deadline) else { return .failure(.timeout) }
            let code = perform(easy, url: url, transfer: context, deadline: deadline)
            limiter.release(url.hostKey)
            if let code, !(code == CURLE_WRITE_ERROR && context.stoppedForStatus) {
                let refused = context.refusedSockets > 0 && context.openedSockets == 0
                return .failure(FetchError.fromCurl(code, refusedAddress: refused, tooLarge: context.tooLarge, limit: policy.maxBodyBytes))
            }
            let status = Self.longInfo(easy, CURLINFO_RESPONSE_CODE)
            switch status {
            case 200..<300:
                return .success(.fetched(body: context.body, contentType: context.contentType, etag: context.etag,
                                         lastModified: context.lastModified, finalURL: url.normalized))
            case 304 where conditional:
                return .success(.notModified)
            case 301, 302, 303, 307, 308:
                // curl resolves Location against the URL fetched; without one the status stands.
                guard let location = Self.stringInfo(easy, CURLINFO_REDIRECT_URL) else { return .failure(.httpStatus(status)) }
                guard redirects < max(0, policy.maxRedirects) else { return .failure(.redirects(limit: max(0, policy.maxRedirects))) }
                redirects += 1
                switch FetchURL.check(location, policy: policy, isRedirect: true) {
                case .success(let next):
                    // Plain http is for URLs named that way (a signed CRL): never a step down from https.
                    if url.scheme == "https", next.scheme == "http", !policy.allowInsecure { return .failure(.redirectInsecure("http")) }
                    url = next
                case .failure(let error):
                    return .failure(error)
                }
            default:
                return .failure(.httpStatus(status))
            }
        }
    }

    /// Callers waiting now for a connection slot to `host:port` (for tests).
    package func waitingForSlot(host: String, port: Int) -> Int {
        limiter.waitingCount(host.lowercased() + ":\(port)")
    }

    /// The options every hop shares; nil when curl took them all.
    private func configure(_ easy: UnsafeMutableRawPointer, policy: FetchPolicy, headers: UnsafeMutablePointer<curl_slist>?, context: UnsafeMutableRawPointer) -> FetchError? {
        let codes = CurlOptions.safety(easy, protocols: policy.protocols, caFile: policy.caFile)
            + CurlOptions.callbacks(easy, body: Transfer.writeCallback, header: Transfer.headerCallback,
                                    openSocket: Transfer.openSocketCallback, context: context)
            + [
                veridoc_curl_setopt_long(easy, CURLOPT_HTTPGET, 1),
                // The body is kept as sent: a token's compression is inside the token, for the caller.
                veridoc_curl_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0),
                veridoc_curl_setopt_string(easy, CURLOPT_USERAGENT, policy.userAgent),
                veridoc_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headers),
                // Refused at once when Content-Length announces more; the write callback catches the rest.
                veridoc_curl_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, policy.maxBodyBytes))),
            ]
        guard let failed = codes.first(where: { $0 != CURLE_OK }) else { return nil }
        return .other(FetchError.curlName(failed))
    }

    /// One hop: the URL, what is left of the total time, the transfer. nil when curl succeeded.
    private func perform(_ easy: UnsafeMutableRawPointer, url: FetchURL, transfer: Transfer, deadline: ContinuousClock.Instant) -> CURLcode? {
        let left = Self.milliseconds(HostLimiter.seconds(ContinuousClock.now.duration(to: deadline)))
        // 0 would mean no timeout at all to curl.
        guard left >= 1 else { return CURLE_OPERATION_TIMEDOUT }
        // A connect timeout of zero or less leaves connecting bounded by the total alone.
        let connectLimit = Self.milliseconds(policy.connectTimeout)
        let connect = connectLimit > 0 ? min(left, connectLimit) : left
        transfer.startHop()
        for code in [veridoc_curl_setopt_string(easy, CURLOPT_URL, url.normalized),
                     veridoc_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, left),
                     veridoc_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connect)] where code != CURLE_OK {
            return code
        }
        let code = curl_easy_perform(easy)
        return code == CURLE_OK ? nil : code
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int(min(seconds, 86_400) * 1000)
    }

    private static func longInfo(_ easy: UnsafeMutableRawPointer, _ info: CURLINFO) -> Int {
        var value = 0
        return veridoc_curl_getinfo_long(easy, info, &value) == CURLE_OK ? value : 0
    }

    private static func stringInfo(_ easy: UnsafeMutableRawPointer, _ info: CURLINFO) -> String? {
        var pointer: UnsafePointer<CChar>?
        guard veridoc_curl_getinfo_string(easy, info, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
    }
}
