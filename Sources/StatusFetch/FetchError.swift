import CCurl

/// Why a fetch gave no response. `code` is stable (for logs, metrics and
/// reason codes); `detail` is for people.
///
/// Neither ever holds the URL, its host, path or query, nor any byte of a
/// body: status list URLs can identify a credential and so a person. What a
/// detail may say is a scheme, an HTTP status number, a limit from the
/// policy, or the name of a curl error.
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL's scheme is not allowed by the policy (the scheme, sanitised).
    case refusedScheme(String)
    /// The URL names a user or password.
    case refusedCredentials
    /// Every address the host name led to is one the policy refuses.
    case refusedAddress
    /// The URL could not be parsed, or is longer than any status list URL needs to be.
    case malformedURL
    /// A request header value (Accept, If-None-Match, If-Modified-Since) holds control characters.
    case malformedHeader
    /// The total timeout passed: waiting for a connection slot, connecting, or receiving.
    case timeout
    /// The host could not be resolved or reached, or the connection broke (a curl error name).
    case connect(String)
    /// The TLS handshake or certificate verification failed (a curl error name).
    case tls(String)
    /// A status other than 2xx, a followed redirect, or 304 to a conditional request.
    case httpStatus(Int)
    /// The body is longer than `FetchPolicy.maxBodyBytes` (the limit): as
    /// received, or as announced by Content-Length, whatever the status.
    case tooLarge(limit: Int)
    /// More redirects than `FetchPolicy.maxRedirects` (the limit).
    case redirects(limit: Int)
    /// A redirect from https to plain http (the scheme).
    case redirectInsecure(String)
    /// Any other failure (a curl error name).
    case other(String)

    public var code: String {
        switch self {
        case .refusedScheme: "fetch.refused_scheme"
        case .refusedCredentials: "fetch.refused_credentials"
        case .refusedAddress: "fetch.refused_address"
        case .malformedURL: "fetch.malformed_url"
        case .malformedHeader: "fetch.malformed_header"
        case .timeout: "fetch.timeout"
        case .connect: "fetch.connect"
        case .tls: "fetch.tls"
        case .httpStatus: "fetch.http_status"
        case .tooLarge: "fetch.too_large"
        case .redirects: "fetch.redirects"
        case .redirectInsecure: "fetch.redirect_insecure"
        case .other: "fetch.other"
        }
    }

    public var detail: String {
        switch self {
        case .refusedScheme(let scheme): "the scheme \(scheme) is not allowed (https only)"
        case .refusedCredentials: "the URL carries a user name or password"
        case .refusedAddress: "the host resolves only to addresses that are not publicly routable"
        case .malformedURL: "the URL could not be parsed"
        case .malformedHeader: "a request header value holds control characters"
        case .timeout: "no complete response within the total timeout"
        case .connect(let name): "the connection failed (\(name))"
        case .tls(let name): "TLS failed (\(name))"
        case .httpStatus(let status): "HTTP status \(status)"
        case .tooLarge(let limit): "the body is longer than \(limit) bytes"
        case .redirects(let limit): "more than \(limit) redirects"
        case .redirectInsecure(let scheme): "a redirect from https to \(scheme)"
        case .other(let name): "the transfer failed (\(name))"
        }
    }

    public var description: String { "\(code): \(detail)" }

    /// A scheme as a detail may show it: lowercased letters, digits, `+-.`, at most 16 of them.
    static func schemeForDetail(_ scheme: String) -> String {
        let allowed = scheme.lowercased().unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
        return allowed && !scheme.isEmpty && scheme.count <= 16 ? scheme.lowercased() : "(unprintable)"
    }

    /// What a failed transfer means. `refusedAddress` and `tooLarge` are
    /// known from the callbacks: curl reports them only as a failed connect
    /// and a failed write.
    static func fromCurl(_ code: CURLcode, refusedAddress: Bool, tooLarge: Bool, limit: Int) -> FetchError {
        let name = curlName(code)
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_FILESIZE_EXCEEDED: return .tooLarge(limit: limit)
        case CURLE_WRITE_ERROR where tooLarge: return .tooLarge(limit: limit)
        case CURLE_COULDNT_CONNECT where refusedAddress: return .refusedAddress
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            return .connect(name)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            return .tls(name)
        case CURLE_URL_MALFORMAT: return .malformedURL
        default: return .other(name)
        }
    }

    /// The CURLE_ constant's name (curl's own messages may quote the host, so they are not used).
    static func curlName(_ code: CURLcode) -> String {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: "CURLE_UNSUPPORTED_PROTOCOL"
        case CURLE_URL_MALFORMAT: "CURLE_URL_MALFORMAT"
        case CURLE_COULDNT_RESOLVE_HOST: "CURLE_COULDNT_RESOLVE_HOST"
        case CURLE_COULDNT_CONNECT: "CURLE_COULDNT_CONNECT"
        case CURLE_WEIRD_SERVER_REPLY: "CURLE_WEIRD_SERVER_REPLY"
        case CURLE_HTTP2: "CURLE_HTTP2"
        case CURLE_PARTIAL_FILE: "CURLE_PARTIAL_FILE"
        case CURLE_WRITE_ERROR: "CURLE_WRITE_ERROR"
        case CURLE_READ_ERROR: "CURLE_READ_ERROR"
        case CURLE_OUT_OF_MEMORY: "CURLE_OUT_OF_MEMORY"
        case CURLE_OPERATION_TIMEDOUT: "CURLE_OPERATION_TIMEDOUT"
        case CURLE_ABORTED_BY_CALLBACK: "CURLE_ABORTED_BY_CALLBACK"
        case CURLE_TOO_MANY_REDIRECTS: "CURLE_TOO_MANY_REDIRECTS"
        case CURLE_GOT_NOTHING: "CURLE_GOT_NOTHING"
        case CURLE_SEND_ERROR: "CURLE_SEND_ERROR"
        case CURLE_RECV_ERROR: "CURLE_RECV_ERROR"
        case CURLE_SSL_CONNECT_ERROR: "CURLE_SSL_CONNECT_ERROR"
        case CURLE_PEER_FAILED_VERIFICATION: "CURLE_PEER_FAILED_VERIFICATION"
        case CURLE_SSL_CERTPROBLEM: "CURLE_SSL_CERTPROBLEM"
        case CURLE_SSL_CIPHER: "CURLE_SSL_CIPHER"
        case CURLE_SSL_CACERT_BADFILE: "CURLE_SSL_CACERT_BADFILE"
        case CURLE_SSL_ISSUER_ERROR: "CURLE_SSL_ISSUER_ERROR"
        case CURLE_SSL_CRL_BADFILE: "CURLE_SSL_CRL_BADFILE"
        case CURLE_SSL_SHUTDOWN_FAILED: "CURLE_SSL_SHUTDOWN_FAILED"
        case CURLE_SSL_INVALIDCERTSTATUS: "CURLE_SSL_INVALIDCERTSTATUS"
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: "CURLE_SSL_PINNEDPUBKEYNOTMATCH"
        case CURLE_SSL_ENGINE_NOTFOUND: "CURLE_SSL_ENGINE_NOTFOUND"
        case CURLE_SSL_ENGINE_SETFAILED: "CURLE_SSL_ENGINE_SETFAILED"
        case CURLE_SSL_ENGINE_INITFAILED: "CURLE_SSL_ENGINE_INITFAILED"
        case CURLE_USE_SSL_FAILED: "CURLE_USE_SSL_FAILED"
        case CURLE_SSL_CLIENTCERT: "CURLE_SSL_CLIENTCERT"
        case CURLE_FILESIZE_EXCEEDED: "CURLE_FILESIZE_EXCEEDED"
        case CURLE_BAD_CONTENT_ENCODING: "CURLE_BAD_CONTENT_ENCODING"
        case CURLE_UNKNOWN_OPTION: "CURLE_UNKNOWN_OPTION"
        case CURLE_NOT_BUILT_IN: "CURLE_NOT_BUILT_IN"
        case CURLE_FAILED_INIT: "CURLE_FAILED_INIT"
        default: "CURLE \(code.rawValue)"
        }
    }
}
