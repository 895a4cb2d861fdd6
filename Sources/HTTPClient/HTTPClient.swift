import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// curl_global_init must run once before any other curl call and is not
/// thread-safe in every build; a global's initializer runs exactly once.
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One HTTP exchange by libcurl: a method, headers and a body out; the
/// status, the headers and at most `maxResponseBytes` of the body back.
/// Redirects are never followed and no proxy is used: the caller names the
/// server it means. Under `addresses: .publicOnly` every address curl is
/// about to connect to meets `AddressRule`, so a name that resolves (or
/// re-resolves) to a private, loopback or link-local address is refused.
/// Used by the wallet simulator calling serve and by webhook deliveries.
public struct HTTPClient: Sendable {
    public struct Response: Sendable {
        public let status: Int
        /// Names lowercased; a repeated header keeps its last value.
        public let headers: [String: String]
        public let body: [UInt8]
        /// The body went on past `maxResponseBytes` and was not read further (`overflow: .truncate`).
        public let truncated: Bool

        public init(status: Int, headers: [String: String], body: [UInt8], truncated: Bool) {
            self.status = status
            self.headers = headers
            self.body = body
            self.truncated = truncated
        }
    }

    /// Why an exchange did not complete. The cases are what a caller acts
    /// on; `detail` is curl's wording, which names no URL or header.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case timeout
        /// Every address of the host was refused by the address rule.
        case addressRefused
        /// No connection (refused, unreachable, no such host).
        case connection(String)
        case tls(String)
        case responseTooLarge(limit: Int)
        case transfer(String)

        /// A stable word for logs, metrics and stored rows.
        public var code: String {
            switch self {
            case .timeout: "timeout"
            case .addressRefused: "address_refused"
            case .connection: "connect_failed"
            case .tls: "tls"
            case .responseTooLarge: "response_too_large"
            case .transfer: "transfer"
            }
        }

        public var description: String {
            switch self {
            case .timeout: "HTTP: timed out"
            case .addressRefused: "HTTP: the address is not a public one (private, loopback or link-local)"
            case .connection(let detail): "HTTP: no connection: \(detail)"
            case .tls(let detail): "HTTP: TLS: \(detail)"
            case .responseTooLarge(let limit): "HTTP: the response is larger than \(limit) bytes"
            case .transfer(let detail): "HTTP: \(detail)"
            }
        }
    }

    public enum Addresses: Sendable {
        case any
        /// Globally routable unicast only (`AddressRule`), checked on each address connected to.
        case publicOnly
    }

    public enum Overflow: Sendable {
        /// A longer body is `Failure.responseTooLarge`.
        case fail
        /// A longer body is cut at the limit and the rest not read: the status is what counts.
        case truncate
    }

    public var timeoutSeconds: Double
    public var connectTimeoutSeconds: Double
    public var maxResponseBytes: Int
    public var overflow: Overflow
    public var addresses: Addresses
    /// false: https only.
    public var allowsPlainHTTP: Bool
    /// A PEM CA bundle trusted instead of the system store; nil: the system store. Verification is on either way.
    public var caFile: String?
    public var userAgent: String

    public init(timeoutSeconds: Double = 60, connectTimeoutSeconds: Double = 10, maxResponseBytes: Int = 4 << 20, overflow: Overflow = .fail,
                addresses: Addresses = .any, allowsPlainHTTP: Bool = true, caFile: String? = nil, userAgent: String = "veridoc") {
        self.timeoutSeconds = timeoutSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.maxResponseBytes = maxResponseBytes
        self.overflow = overflow
        self.addresses = addresses
        self.allowsPlainHTTP = allowsPlainHTTP
        self.caFile = caFile
        self.userAgent = userAgent
    }

    public func send(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws(Failure) -> Response {
        guard curlGlobalInit == CURLE_OK else { throw .transfer("curl_global_init failed") }
        for (name, value) in headers where Self.breaksHeader(name) || Self.breaksHeader(value) {
            // A CR or LF would let a value write headers of its own.
            throw .transfer("a header holds a control character")
        }
        guard let easy = curl_easy_init() else { throw .transfer("curl_easy_init failed") }
        defer { curl_easy_cleanup(easy) }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        // curl adds "Expect: 100-continue" to larger bodies; the servers called answer at once instead.
        list = curl_slist_append(list, "Expect:")
        defer { curl_slist_free_all(list) }
        let exchange = Exchange(limit: maxResponseBytes, overflow: overflow, addresses: addresses)
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        let payload = body ?? []
        let protocols = allowsPlainHTTP ? "http,https" : "https"
        let code: CURLcode = withExtendedLifetime(exchange) {
            payload.withUnsafeBufferPointer { bytes in
                var setup = CurlOptions.safety(easy, protocols: protocols, caFile: caFile)
                    + CurlOptions.callbacks(easy, body: Exchange.writeCallback, header: Exchange.headerCallback,
                                            openSocket: Exchange.openSocketCallback, context: context)
                setup += [
                    veridoc_curl_setopt_string(easy, CURLOPT_URL, url),
                    veridoc_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method),
                    veridoc_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeoutSeconds)),
                    veridoc_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(min(connectTimeoutSeconds, timeoutSeconds))),
                    veridoc_curl_setopt_string(easy, CURLOPT_USERAGENT, userAgent),
                    veridoc_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list),
                ]
                if body != nil {
                    setup.append(veridoc_curl_setopt_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)))
                    setup.append(veridoc_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)))
                }
                if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
                return curl_easy_perform(easy)
            }
        }
        var status = 0
        _ = veridoc_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        if exchange.tooLarge {
            guard overflow == .truncate, status > 0 else { throw .responseTooLarge(limit: maxResponseBytes) }
        } else if code != CURLE_OK {
            throw Self.failure(code, refused: exchange.refusedSockets > 0 && exchange.openedSockets == 0)
        }
        return Response(status: status, headers: exchange.headers, body: exchange.body, truncated: exchange.tooLarge)
    }

    private static func failure(_ code: CURLcode, refused: Bool) -> Failure {
        if refused { return .addressRefused }
        let detail = String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .connection(detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE:
            return .tls(detail)
        default: return .transfer(detail)
        }
    }

    private static func breaksHeader(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7f }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 1 }
        return max(1, Int(min(seconds, 86_400) * 1000))
    }

    /// What curl's callbacks reach through their user pointer; used on the
    /// one thread inside `curl_easy_perform`.
    private final class Exchange {
        let limit: Int
        let overflow: Overflow
        let addresses: Addresses
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var tooLarge = false
        var refusedSockets = 0
        var openedSockets = 0

        init(limit: Int, overflow: Overflow, addresses: Addresses) {
            self.limit = limit
            self.overflow = overflow
            self.addresses = addresses
        }

        static let writeCallback: curl_write_callback = { data, size, count, context in
            guard let data, let context else { return 0 }
            let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            let room = exchange.limit - exchange.body.count
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(length, max(0, room))))
            }
            guard length <= room else {
                // Stopping here ends the transfer: the rest is never read.
                exchange.tooLarge = true
                return 0
            }
            return length
        }

        static let headerCallback: curl_write_callback = { data, size, count, context in
            guard let data, let context else { return 0 }
            let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            let line = data.withMemoryRebound(to: UInt8.self, capacity: length) { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) }
            if line.hasPrefix("HTTP/") { exchange.headers = [:] }
            if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
                exchange.headers[name] = value
            }
            return length
        }

        static let openSocketCallback: curl_opensocket_callback = { context, purpose, address in
            guard let context, let address else { return CURL_SOCKET_BAD }
            let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
            let opened = CheckedSocket.open(purpose: purpose, address: address) { bytes in
                switch exchange.addresses {
                case .any: true
                case .publicOnly: bytes.count == 4 ? AddressRule.allows(ipv4: bytes) : AddressRule.allows(ipv6: bytes)
                }
            }
            if opened.refused { exchange.refusedSockets += 1 } else if opened.socket != CURL_SOCKET_BAD { exchange.openedSockets += 1 }
            return opened.socket
        }
    }
}
