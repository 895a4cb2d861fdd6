import Postgres

/// Whose data a right-to-erasure request removes: one request's or a whole tenant's.
public enum ErasureScope: Sendable, Equatable {
    case request(eventID: String)
    case tenant(String)

    var column: String {
        switch self {
        case .request: "event_id"
        case .tenant: "tenant"
        }
    }

    var value: String {
        switch self {
        case .request(let eventID): eventID
        case .tenant(let tenant): tenant
        }
    }
}

/// Erasure in a table that keeps outcome CloudEvents (the outbox, sessions,
/// webhook deliveries): the outcome in `column` loses its sealed claims and
/// its age answers, what an outcome holds of the holder, and keeps the rest
/// (verdict, reasons, ids) that the integrator may still need. One value a
/// table, so the three tables say only how their rows are found.
struct ClaimsStripping {
    /// `text` (a JSON document Veridoc wrote) as jsonb. jsonb refuses the
    /// escape `\u0000`, which an outcome carries wherever hostile input put a
    /// NUL in a string it quotes (an event id, a docType); erasure must not
    /// fail on such a row, so the escape becomes `\ufffd` first, the
    /// replacement character storage writes for NUL everywhere else.
    static func jsonb(_ text: String) -> String {
        "replace(\(text), '\\u0000', '\\ufffd')::jsonb"
    }

    let table: String
    let column: String
    /// The columns naming one row, for the bounded inner select.
    let key: [String]
    /// Rows that still hold claims or ages.
    let holdsClaims: String
    /// What else the update sets once they are gone (`has_claims = false`), if anything.
    let alsoSet: String?
    /// One request's rows and one tenant's, each on `$1`.
    let requestRows: String
    let tenantRows: String

    func statement(_ scope: ErasureScope, limit: Int) -> PostgresStatement {
        let rows = switch scope {
        case .request: requestRows
        case .tenant: tenantRows
        }
        let stripped = "(\(Self.jsonb(column)) #- '{data,claims}' #- '{data,ages}')::text"
        let keyList = key.joined(separator: ", ")
        return PostgresStatement("""
            UPDATE \(table) SET \(column) = \(stripped)\(alsoSet.map { ", \($0)" } ?? "")
            WHERE (\(keyList)) IN (SELECT \(keyList) FROM \(table) WHERE \(holdsClaims) AND \(rows) LIMIT $2)
            """, [.text(scope.value), .int(Int64(limit))])
    }
}
