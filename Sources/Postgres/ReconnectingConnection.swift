/// A connection made on first use and made again after it was lost, for the
/// worker's long-lived loops (persister, outbox, probe, purge). Like the
/// connection it holds, it belongs to one thread at a time.
public final class ReconnectingConnection: @unchecked Sendable {
    private let connect: () throws -> PostgresConnection
    private var connection: PostgresConnection?

    public init(_ connect: @escaping () throws -> PostgresConnection) {
        self.connect = connect
    }

    /// The open connection, connecting first when there is none or it was lost.
    public func get() throws -> PostgresConnection {
        if let connection, connection.isConnected { return connection }
        connection?.close()
        connection = nil
        let fresh = try connect()
        connection = fresh
        return fresh
    }

    /// Whether the current connection (if any) is still up.
    public var isConnected: Bool { connection?.isConnected ?? false }

    /// Closes and forgets the connection; the next `get` connects anew.
    public func drop() {
        connection?.close()
        connection = nil
    }
}
