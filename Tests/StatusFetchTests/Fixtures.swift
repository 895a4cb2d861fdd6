import Crypto
import Foundation
import HTTPService
import StatusFetch
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A test CA, written to a file for `FetchPolicy.caFile`, and server
/// certificates it issues, for HTTPDaemon's TLS.
struct TestPKI {
    let caKey: PrivateKey
    let ca: Certificate
    let caFile: String

    init() throws {
        caKey = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", "StatusFetch Test CA")], publicKey: caKey.publicKey,
                                         notBefore: Date().addingTimeInterval(-3600), notAfter: Date().addingTimeInterval(86_400))
        builder.isCA = true
        builder.keyUsage = [.keyCertSign, .cRLSign]
        ca = try builder.selfSigned(with: caKey)
        caFile = FileManager.default.temporaryDirectory.appendingPathComponent("statusfetch-ca-\(UUID().uuidString).pem").path
        guard FileManager.default.createFile(atPath: caFile, contents: Data(Self.pem(ca).utf8)) else { throw TestFailure("cannot write \(caFile)") }
    }

    /// A server certificate and key for HTTPDaemon, naming `dnsNames` and `ipAddresses` (4 bytes each) in its subjectAltName.
    func serverTLS(dnsNames: [String] = ["localhost"], ipAddresses: [[UInt8]] = [[127, 0, 0, 1]]) throws -> HTTPDaemon.TLS {
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", dnsNames.first ?? "server")], publicKey: key.publicKey,
                                         notBefore: Date().addingTimeInterval(-3600), notAfter: Date().addingTimeInterval(86_400))
        builder.isCA = false
        builder.keyUsage = [.digitalSignature]
        builder.extendedKeyUsage = ["1.3.6.1.5.5.7.3.1"]
        builder.extraExtensions = [(oid: "2.5.29.17", critical: false, der: Self.subjectAltName(dnsNames: dnsNames, ipAddresses: ipAddresses))]
        let certificate = try builder.signed(by: ca, issuerKey: caKey)
        return HTTPDaemon.TLS(certificatePEM: Self.pem(certificate), keyPEM: try key.pkcs8PEM())
    }

    /// GeneralNames: dNSName [2] and iPAddress [7], each short enough for one-byte DER lengths.
    static func subjectAltName(dnsNames: [String], ipAddresses: [[UInt8]]) -> [UInt8] {
        var names: [UInt8] = []
        for name in dnsNames { names += [0x82, UInt8(name.utf8.count)] + Array(name.utf8) }
        for address in ipAddresses { names += [0x87, UInt8(address.count)] + address }
        return [0x30, UInt8(names.count)] + names
    }

    static func pem(_ certificate: Certificate) -> String {
        "-----BEGIN CERTIFICATE-----\n" + Data(certificate.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }

    func remove() { try? FileManager.default.removeItem(atPath: caFile) }
}

/// What a test server saw: requests, how many handlers ran at once, the last request's headers.
final class Probe: Sendable {
    private struct State {
        var requests = 0
        var inFlight = 0
        var maxInFlight = 0
        var lastHeaders: [String: String] = [:]
    }
    private let state = Mutex(State())

    var requests: Int { state.withLock { $0.requests } }
    var inFlight: Int { state.withLock { $0.inFlight } }
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }
    var lastHeaders: [String: String] { state.withLock { $0.lastHeaders } }

    /// Counts `request` in for the duration of `body`.
    func during<T>(_ request: HTTPRequest, _ body: () -> T) -> T {
        state.withLock {
            $0.requests += 1
            $0.inFlight += 1
            $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
            $0.lastHeaders = request.headers
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        return body()
    }
}

/// Closed until a test opens it; handlers wait on it (each for at most a
/// minute, so a failing test cannot keep a daemon from stopping).
final class Gate: @unchecked Sendable {
    // `isOpen` is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() {
        let deadline = Date().addingTimeInterval(60)
        condition.lock()
        while !isOpen && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// HTTPDaemon on 127.0.0.1 and an ephemeral port, every request counted by `probe`.
func serve(tls: HTTPDaemon.TLS? = nil, probe: Probe = Probe(), _ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> HTTPDaemon {
    try HTTPDaemon(port: 0, loopbackOnly: true, tls: tls) { request in probe.during(request) { handler(request) } }
}

/// One plain-HTTP fetch of `path` under `insecurePolicy()` from a server
/// answering with `handler`, stopped afterwards.
func fetchOnce(_ path: String, probe: Probe = Probe(), _ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> Result<FetchResponse, FetchError> {
    let daemon = try serve(probe: probe, handler)
    defer { daemon.stop() }
    return StatusFetcher(policy: insecurePolicy()).fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)\(path)", accept: "*/*"))
}

/// A TLS server on 127.0.0.1 under a new test CA, answering "never": for
/// tests that expect it never to be reached, or never to be trusted. The
/// server and the CA's files are gone afterwards.
func withUnreachedTLSServer(_ body: (_ pki: TestPKI, _ daemon: HTTPDaemon, _ probe: Probe) throws -> Void) throws {
    let pki = try TestPKI()
    defer { pki.remove() }
    let probe = Probe()
    let daemon = try serve(tls: pki.serverTLS(), probe: probe) { _ in .text(200, "never") }
    defer { daemon.stop() }
    try body(pki, daemon, probe)
}

/// Generous limits where time is not what a test is about: the machine may be busy.
func insecurePolicy() -> FetchPolicy {
    FetchPolicy(allowInsecure: true, connectTimeout: 30, totalTimeout: 60)
}

/// The strict policy, but trusting `caFile` and reaching 127.0.0.1.
func strictLoopbackPolicy(caFile: String?) -> FetchPolicy {
    var policy = FetchPolicy(connectTimeout: 30, totalTimeout: 60, caFile: caFile)
    policy.allowsLoopbackForTests = true
    return policy
}

/// A raw HTTP/1.1 server for one connection: it answers with a body of
/// `total` bytes (endless when nil) and no Content-Length, ending it by
/// closing the connection, so only the fetcher's write callback can hold the
/// size limit. HTTPDaemon always announces a length.
final class StreamingServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    // `sent` and `finished` are guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var sent = 0
    private var finished = false
    /// What an endless body stops at if the client never hangs up.
    static let cap = 256 << 20

    init(total: Int?) throws {
        (listener, port) = try LoopbackSocket.bind(listening: 4)
        Thread.detachNewThread { [self] in run(total: total) }
    }

    deinit { close(listener) }

    private func run(total: Int?) {
        let connection = accept(listener, nil, nil)
        var count = 0
        defer {
            if connection >= 0 { close(connection) }
            condition.lock()
            sent = count
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        guard connection >= 0 else { return }
        // The request's headers, up to their blank line.
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            request += buffer.prefix(n)
        }
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n".utf8)
        guard head.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == head.count else { return }
        let chunk = [UInt8](repeating: 0x61, count: 64 << 10)
        let limit = total ?? Self.cap
        while count < limit {
            let n = chunk.withUnsafeBytes { send(connection, $0.baseAddress, min($0.count, limit - count), Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            count += n
        }
    }

    /// Body bytes written before the connection ended, once it has (nil if it has not within a minute).
    func bytesSent() -> Int? {
        let deadline = Date().addingTimeInterval(60)
        condition.lock()
        defer { condition.unlock() }
        while !finished && condition.wait(until: deadline) {}
        return finished ? sent : nil
    }
}

extension Result where Success == FetchResponse, Failure == FetchError {
    var error: FetchError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var body: [UInt8]? {
        if case .success(.fetched(let body, _, _, _, _)) = self { return body }
        return nil
    }
}
