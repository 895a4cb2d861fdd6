/// Every failure the PostgreSQL layer reports.
///
/// Safe to log: it keeps the SQLSTATE, the server's *primary* message and the
/// constraint and table names, and drops DETAIL, HINT, CONTEXT and the query
/// position. DETAIL is where PostgreSQL prints row values ("Key (id)=(42)
/// already exists", "Failing row contains (…)"), and those can be personal data.
/// For data exceptions (SQLSTATE class 22) the primary message itself quotes the
/// offending input (`invalid input syntax for type uuid: "…"`), so quoted text
/// in those messages is replaced by `"…"` as well.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the failure was detected; decides, with the SQLSTATE, whether a retry can help.
    public enum Kind: Sendable, Equatable {
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// No usable connection: refused, timed out, lost mid-query, or the
        /// server ended the session. Always transient.
        case connection
        /// Misuse caught before anything reached the server (closed connection,
        /// NUL in text, too many parameters, nested transaction). Retrying the
        /// same call fails the same way.
        case client
    }

    public let kind: Kind
    /// The five-character SQLSTATE, e.g. "23505"; nil when the server sent none.
    public let sqlState: String?
    /// The primary message only (no DETAIL), with values redacted as described above.
    public let message: String
    /// The violated constraint's name, for integrity errors (class 23).
    public let constraint: String?
    /// The table the error concerns, when the server names one.
    public let table: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, constraint: String? = nil, table: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
        self.table = table
    }

    /// SQLSTATEs after which the same work can succeed once the server or the
    /// competing transaction has moved on: admin/crash shutdown (57P01..57P03),
    /// serialization failure (40001), deadlock (40P01), too many connections
    /// (53300), lock not available (55P03), statement_timeout cancel (57014).
    static let transientStates: Set<String> = ["57P01", "57P02", "57P03", "40001", "40P01", "53300", "55P03", "57014"]

    /// Connection lost/refused, admin shutdown (57P01..57P03), cannot connect now, serialization failure 40001,
    /// deadlock 40P01, too many connections 53300, lock timeout 55P03, query canceled by statement_timeout 57014:
    /// retry after backoff (on a reset or new connection when `kind == .connection`).
    public var isTransient: Bool {
        if kind == .connection { return true }
        guard let sqlState else { return false }
        // Class 08 is "connection exception" (08006 connection failure, 08001 cannot establish, …).
        return Self.transientStates.contains(sqlState) || sqlState.hasPrefix("08")
    }

    /// The server (or the client's own checks, which use the server's codes)
    /// refused what a statement carried, not the state of the server or the
    /// session: data exceptions (class 22), integrity violations (23) and
    /// size limits (54). The same values fail again; other values need not.
    public var isCausedByContent: Bool {
        guard let sqlState, kind != .connection else { return false }
        return sqlState.hasPrefix("22") || sqlState.hasPrefix("23") || sqlState.hasPrefix("54")
    }

    public var description: String {
        var text = "PostgreSQL"
        switch kind {
        case .server: text += " error"
        case .connection: text += " connection error"
        case .client: text += " client error"
        }
        if let sqlState { text += " \(sqlState)" }
        if let constraint { text += " (constraint \(constraint))" }
        text += ": \(message)"
        if isTransient { text += " [transient]" }
        return text
    }
}

extension PostgresError {
    static func client(_ message: String, sqlState: String? = nil) -> PostgresError {
        PostgresError(kind: .client, sqlState: sqlState, message: message)
    }

    /// The first line of a libpq message: later lines are hints ("This probably
    /// means the server terminated abnormally…") and the severity prefix is noise.
    static func firstLine(of libpqMessage: String) -> String {
        var line = libpqMessage.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        for prefix in ["ERROR:  ", "FATAL:  ", "PANIC:  "] where line.hasPrefix(prefix) {
            line.removeFirst(prefix.count)
        }
        line = line.trimmingWhitespace()
        return line.isEmpty ? "unknown libpq error" : line
    }

    /// Replaces every double-quoted span with `"…"`. Used for data exceptions,
    /// whose primary messages quote the rejected input value.
    static func redactQuoted(_ message: String) -> String {
        var out = ""
        var inQuote = false
        for character in message {
            if character == "\"" {
                if inQuote { out += "…\"" } else { out.append("\"") }
                inQuote.toggle()
            } else if !inQuote {
                out.append(character)
            }
        }
        if inQuote { out += "…" }
        return out
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
