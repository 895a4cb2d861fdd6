import CCurl
import HTTPClient
#if canImport(Glibc)
import Glibc
#endif

/// What curl's callbacks of one fetch reach through their user pointer, and
/// the callbacks themselves. curl calls them on the thread inside
/// `curl_easy_perform`, so nothing here is shared between threads.
final class Transfer {
    let policy: FetchPolicy

    /// The current hop's body (2xx only), within `policy.maxBodyBytes`.
    var body: [UInt8] = []
    /// The status of the response whose headers arrived last (curl reports
    /// interim 1xx responses and, on each hop, the real one).
    var status = 0
    var contentType: String?
    var etag: String?
    var lastModified: String?
    /// The body went past the limit and the transfer was stopped.
    var tooLarge = false
    /// A non-2xx body was coming: the transfer was stopped (the status is all that is used).
    var stoppedForStatus = false
    /// Sockets the current hop had refused by the address rule, and sockets it opened.
    var refusedSockets = 0
    var openedSockets = 0

    init(policy: FetchPolicy) {
        self.policy = policy
    }

    /// Before each hop: only the final response's headers and body count.
    func startHop() {
        body = []
        status = 0
        contentType = nil
        etag = nil
        lastModified = nil
        tooLarge = false
        stoppedForStatus = false
        refusedSockets = 0
        openedSockets = 0
    }

    /// One header line as curl delivers it, CRLF included.
    func header(_ line: UnsafeBufferPointer<UInt8>) {
        if line.starts(with: Array("HTTP/".utf8)) {
            // A status line starts a response: what came before it belonged to another one.
            // "HTTP/1.1 200 OK", "HTTP/2 204": the digits after the first space.
            let code = line.drop(while: { $0 != UInt8(ascii: " ") }).dropFirst().prefix(while: { (0x30...0x39).contains($0) })
            status = code.count == 3 ? Int(String(decoding: code, as: UTF8.self)) ?? 0 : 0
            contentType = nil
            etag = nil
            lastModified = nil
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        let value = Self.trimmed(line[(colon + 1)...])
        switch name {
        case "content-type": contentType = value
        case "etag": etag = value
        case "last-modified": lastModified = value
        default: break
        }
    }

    /// A body chunk; false stops the transfer.
    func receive(_ chunk: UnsafeBufferPointer<UInt8>) -> Bool {
        guard (200..<300).contains(status) else {
            // An error page or a redirect's body is never used: not reading it
            // saves the time and memory an arbitrarily long one would cost.
            stoppedForStatus = true
            return false
        }
        guard chunk.count <= policy.maxBodyBytes - body.count else {
            tooLarge = true
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    /// A socket for curl to connect, or CURL_SOCKET_BAD when the address rule refuses the address.
    func openSocket(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        let opened = CheckedSocket.open(purpose: purpose, address: address, permits: policy.permitsConnection(to:))
        if opened.refused { refusedSockets += 1 } else if opened.socket != CURL_SOCKET_BAD { openedSockets += 1 }
        return opened.socket
    }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0d || $0 == 0x0a }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    // The C callbacks: each finds its Transfer through the user pointer set next to it.

    static let writeCallback: curl_write_callback = { data, size, count, user in
        guard let user else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let length = size * count
        guard length > 0, let data else { return 0 }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            transfer.receive(UnsafeBufferPointer(start: $0, count: length)) ? length : 0
        }
    }

    static let headerCallback: curl_write_callback = { data, size, count, user in
        guard let user else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let length = size * count
        guard length > 0, let data else { return length }
        data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.header(UnsafeBufferPointer(start: $0, count: length)) }
        return length
    }

    static let openSocketCallback: curl_opensocket_callback = { user, purpose, address in
        guard let user, let address else { return CURL_SOCKET_BAD }
        return Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().openSocket(purpose: purpose, address: address)
    }
}
