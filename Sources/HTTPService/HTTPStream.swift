/// A response body sent as it is made (`text/event-stream`): `next` is
/// called on the connection's own thread, may block until it has
/// something, and returns nil to end the response. The daemon keeps the
/// connection in its handling phase meanwhile (no send deadline, never
/// evicted): whoever makes the stream bounds how many are open and how long
/// each waits between chunks. `onEnd` runs once, when libmicrohttpd lets
/// go of the response, however it ended (the stream's end, the client gone).
///
/// Unchecked Sendable: `pending` is touched only by the connection's thread.
public final class HTTPStream: @unchecked Sendable {
    let next: @Sendable () -> [UInt8]?
    private let onEnd: @Sendable () -> Void
    var pending: [UInt8] = []
    var offset = 0

    public init(next: @escaping @Sendable () -> [UInt8]?, onEnd: @escaping @Sendable () -> Void = {}) {
        self.next = next
        self.onEnd = onEnd
    }

    deinit { onEnd() }
}
