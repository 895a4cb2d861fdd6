import CLibPQ
import Foundation

/// One PostgreSQL session; the only owner of its libpq `PGconn`.
///
/// **Threading.** A `PGconn` is not thread-safe, so a connection is used by one
/// thread at a time; every method blocks that thread until the server answers
/// (connect honours `connect_timeout`, statements honour `statement_timeout`).
/// Call it from a thread you own (a dedicated `Thread`, or a queue/executor
/// reserved for blocking work), never from Swift concurrency's cooperative pool.
/// The class is `@unchecked Sendable` only so it can be *handed* to its owning
/// thread; overlapping calls from two threads are caught and trap, rather than
/// corrupting libpq's state.
///
/// **Lifetime.** `close()` (or deinit) calls `PQfinish` exactly once. After a
/// connection error (`PostgresError.kind == .connection`) the session is gone:
/// `reset()` reconnects with the same parameters, and session state (SET, open
/// transaction, advisory locks, prepared statements) does not survive it.
///
/// **Session setup.** `client_encoding` is forced to UTF8 (the API speaks Swift
/// strings) and `DateStyle` to ISO (what `PostgresResult.date` reads). Notices
/// are dropped instead of being printed to stderr by libpq, because
/// `RAISE NOTICE` text can carry row values.
public final class PostgresConnection: @unchecked Sendable {
    /// The `PGconn*`; nil once closed. Touched only by the thread currently inside `exclusive`.
    var handle: OpaquePointer?
    /// The session's named statements (see `PreparedStatementCache`). Touched only inside `exclusive`.
    var statementCache: PreparedStatementCache
    private let inUse = NSLock()

    /// Connects, blocking up to `connect_timeout` per host address.
    ///
    /// `connectionString` is anything libpq accepts: `key=value` pairs, a
    /// `postgresql://` URI, or a bare database name. `PG*` environment variables
    /// fill in what it leaves out, as libpq documents. `applicationName` is the
    /// fallback for `application_name` (the string or `PGAPPNAME` win over it).
    /// Without `connect_timeout` in the string or `PGCONNECT_TIMEOUT`, 5 seconds
    /// apply, so a black-holed host cannot block a worker thread for minutes.
    ///
    /// `preparedStatements: false` sends every statement unnamed, for a pooler
    /// that runs each transaction on whichever server session is free
    /// (PgBouncer's transaction mode), where a named statement prepared on one
    /// session is missing on the next.
    public init(connectionString: String, applicationName: String = "veridoc", preparedStatements: Bool = true) throws(PostgresError) {
        statementCache = PreparedStatementCache(enabled: preparedStatements)
        guard !connectionString.utf8.contains(0), !applicationName.utf8.contains(0) else {
            throw .client("connection string or application name contains U+0000")
        }
        let explicitTimeout = try Self.setsConnectTimeout(connectionString)
        // Order matters: libpq processes the keywords in order and the last value
        // wins, and the expanded `dbname` (the whole connection string) sits
        // between the defaults it may override and the settings it may not.
        var keywords: [(String, String)] = [("fallback_application_name", applicationName)]
        if !explicitTimeout && ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            keywords.append(("connect_timeout", "5"))
        }
        keywords.append(("dbname", connectionString))
        keywords.append(("client_encoding", "UTF8"))

        let connection = Self.connect(keywords)
        guard let connection else { throw PostgresError(kind: .connection, message: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresError.firstLine(of: String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: message)
        }
        self.handle = connection
        PostgresNotices.install(on: connection)
        do {
            try prepareSession()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Whether libpq considers the session usable. It learns that the server is
    /// gone only when a call fails, so `true` is not a promise that the next statement works.
    public var isConnected: Bool {
        exclusive { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }
    }

    /// Drops the session and connects again with the same parameters (`PQreset`).
    public func reset() throws(PostgresError) {
        try exclusive { () throws(PostgresError) in
            guard let handle else { throw PostgresError.closed }
            statementCache.clear()
            PQreset(handle)
            guard PQstatus(handle) == CONNECTION_OK else {
                throw PostgresError(kind: .connection, message: PostgresError.firstLine(of: String(cString: PQerrorMessage(handle))))
            }
        }
        try prepareSession()
    }

    /// Ends the session (`PQfinish`). Idempotent; later calls fail with a client error.
    public func close() {
        exclusive {
            if let handle { PQfinish(handle) }
            handle = nil
            statementCache.clear()
        }
    }

    /// Runs `body` as the only user of the `PGconn`. Two threads inside at once
    /// is a data race on libpq's state, so it traps with a clear message instead.
    func exclusive<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard inUse.try() else {
            preconditionFailure("PostgresConnection used from two threads at once; a PGconn is single-threaded")
        }
        defer { inUse.unlock() }
        return try body()
    }

    /// libpq's `PQtransactionStatus`, for the transaction helpers.
    var transactionStatus: PGTransactionStatusType {
        exclusive { handle.map { PQtransactionStatus($0) } ?? PQTRANS_UNKNOWN }
    }

    /// Server-reported settings the result decoders rely on; a round trip only when one is off.
    private func prepareSession() throws(PostgresError) {
        let dateStyle: String? = exclusive { handle.flatMap { PQparameterStatus($0, "DateStyle") }.map { String(cString: $0) } }
        if !(dateStyle?.hasPrefix("ISO") ?? false) {
            _ = try execute("SET DateStyle TO ISO")
        }
    }

    /// Whether the string itself names connect_timeout. A string libpq cannot
    /// parse is rejected here, without echoing it: it may hold a password.
    private static func setsConnectTimeout(_ connectionString: String) throws(PostgresError) -> Bool {
        // A bare database name (no "=" and no URI scheme) is not a conninfo string.
        let isConninfo = connectionString.contains("=")
            || connectionString.hasPrefix("postgresql://") || connectionString.hasPrefix("postgres://")
        guard isConninfo else { return false }
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &parseError) else {
            if let parseError { PQfreemem(parseError) }
            throw .client("the connection string is not valid libpq syntax (not shown: it may contain a password)")
        }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "connect_timeout", option.pointee.val != nil { return true }
            option += 1
        }
        return false
    }

    private static func connect(_ keywords: [(String, String)]) -> OpaquePointer? {
        let names = keywords.map { strdup($0.0) }
        let values = keywords.map { strdup($0.1) }
        defer {
            names.forEach { free($0) }
            values.forEach { free($0) }
        }
        let namePointers = names.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        // expand_dbname = 1: the dbname value may be a whole connection string.
        return PQconnectdbParams(namePointers, valuePointers, 1)
    }
}

extension PostgresError {
    static let closed = PostgresError.client("the connection is closed")
}
