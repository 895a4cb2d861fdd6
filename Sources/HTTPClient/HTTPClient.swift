import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP exchange at a time by libcurl, for Veridoc's own tools (the
/// wallet simulator calling serve): a method, headers and a body out; the
/// status, the headers and at most `maxResponseBytes` of the body back.
/// Redirects are not followed and no proxy is used: the caller names the
/// server it means.
public struct HTTPClient: Sendable {
    public struct Response: Sendable {
        public let status: Int
        /// Names lowercased; a repeated header keeps its last value.
        public let headers: [String: String]
        public let body: [UInt8]
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// curl could not complete the exchange (no connection, a timeout, TLS).
        case transfer(String)
        case responseTooLarge(limit: Int)

        public var description: String {
            switch self {
            case .transfer(let reason): "HTTP: \(reason)"
            case .responseTooLarge(let limit): "HTTP: the response is larger than \(limit) bytes"
            }
        }
    }

    public var timeoutSeconds: Int
    public var maxResponseBytes: Int

    public init(timeoutSeconds: Int = 60, maxResponseBytes: Int = 4 << 20) {
        self.timeoutSeconds = timeoutSeconds
        self.maxResponseBytes = maxResponseBytes
    }

    public func send(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws(Failure) -> Response {
        guard let easy = curl_easy_init() else { throw .transfer("curl_easy_init failed") }
        defer { curl_easy_cleanup(easy) }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        // curl adds "Expect: 100-continue" to larger bodies; serve answers at once instead.
        list = curl_slist_append(list, "Expect:")
        defer { curl_slist_free_all(list) }
        let exchange = Exchange(limit: maxResponseBytes)
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        let payload = body ?? []
        let code: CURLcode = payload.withUnsafeBufferPointer { bytes in
            let setup = [
                veridoc_curl_setopt_string(easy, CURLOPT_URL, url),
                veridoc_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method),
                veridoc_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1),
                veridoc_curl_setopt_string(easy, CURLOPT_PROXY, ""),
                veridoc_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
                veridoc_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0),
                veridoc_curl_setopt_long(easy, CURLOPT_TIMEOUT, timeoutSeconds),
                veridoc_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list),
                veridoc_curl_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, Exchange.writeCallback),
                veridoc_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context),
                veridoc_curl_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, Exchange.headerCallback),
                veridoc_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context),
            ] + (body == nil ? [] : [
                veridoc_curl_setopt_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)),
                veridoc_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)),
            ])
            if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
            return curl_easy_perform(easy)
        }
        if exchange.tooLarge { throw .responseTooLarge(limit: maxResponseBytes) }
        guard code == CURLE_OK else { throw .transfer(String(cString: curl_easy_strerror(code))) }
        var status = 0
        _ = veridoc_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, headers: exchange.headers, body: exchange.body)
    }

    /// What curl's callbacks reach through their user pointer; used on the
    /// one thread inside `curl_easy_perform`.
    private final class Exchange {
        let limit: Int
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var tooLarge = false

        init(limit: Int) { self.limit = limit }

        static let writeCallback: curl_write_callback = { data, size, count, context in
            guard let data, let context else { return 0 }
            let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            guard exchange.body.count + length <= exchange.limit else {
                exchange.tooLarge = true
                return 0
            }
            data.withMemoryRebound(to: UInt8.self, capacity: length) { exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
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
    }
}
