import CLibPQ
import Foundation

extension PostgresConnection {
    /// One `NOTIFY` this session received (after its `LISTEN`).
    public struct Notification: Sendable, Equatable {
        public let channel: String
        public let payload: String
    }

    /// Waits up to `timeout` for notifications on the channels this session
    /// listens to, and returns those that arrived (none when the time ran
    /// out). A connection error throws: the caller reconnects and listens
    /// again, and must assume it missed some.
    public func notifications(waitingUpTo timeout: TimeInterval) throws(PostgresError) -> [Notification] {
        try exclusive { () throws(PostgresError) -> [Notification] in
            guard let handle else { throw PostgresError(kind: .connection, message: "the connection is closed") }
            var received = Self.drainNotifications(handle)
            guard received.isEmpty else { return received }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else { throw PostgresError(kind: .connection, message: "the connection has no socket") }
            let ready = poll(&descriptor, 1, Int32(max(0, min(timeout, 3_600)) * 1_000))
            guard ready > 0 else { return [] }
            guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                throw PostgresError(kind: .connection, message: PostgresError.firstLine(of: String(cString: PQerrorMessage(handle))))
            }
            received = Self.drainNotifications(handle)
            return received
        }
    }

    private static func drainNotifications(_ handle: OpaquePointer) -> [Notification] {
        var received: [Notification] = []
        while let notify = PQnotifies(handle) {
            received.append(Notification(channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra)))
            PQfreemem(notify)
        }
        return received
    }
}
