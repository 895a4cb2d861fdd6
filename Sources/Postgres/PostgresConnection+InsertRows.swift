import CLibPQ

extension PostgresConnection {
    /// Inserts many rows with multi-row `INSERT … VALUES ($1,$2),($3,$4)… suffix`
    /// statements: one round trip per chunk, each chunk as large as the
    /// protocol's 65,535-parameter limit allows (⌊65535 / columns⌋ rows), so
    /// round trips and statements do not grow with every row.
    ///
    /// - `table` is SQL, not data: a table name as the statement should read it,
    ///   e.g. `quoteIdentifier(schema) + "." + quoteIdentifier("outcomes")`.
    /// - `columns` are plain names; each is quoted here.
    /// - `suffix` follows every chunk, e.g. `ON CONFLICT (message_id) DO NOTHING`.
    ///
    /// Returns the affected rows summed over chunks, so with `DO NOTHING` only
    /// rows actually inserted count. Outside a transaction, several chunks run
    /// in one BEGIN/COMMIT so the insert is all-or-nothing either way.
    @discardableResult
    public func insertRows(into table: String, columns: [String], rows: [[PostgresValue]], suffix: String = "") throws(PostgresError) -> Int {
        guard !columns.isEmpty else { throw .client("insertRows needs at least one column") }
        guard columns.count <= ParameterBuffer.maximumCount else {
            throw .client("insertRows with \(columns.count) columns exceeds the \(ParameterBuffer.maximumCount)-parameter limit")
        }
        for column in columns where column.utf8.contains(0) {
            throw .client("a column name contains U+0000")
        }
        for (index, row) in rows.enumerated() where row.count != columns.count {
            throw .client("insertRows row \(index) has \(row.count) values for \(columns.count) columns")
        }
        guard !rows.isEmpty else { return 0 }

        let rowsPerChunk = ParameterBuffer.maximumCount / columns.count
        let head = "INSERT INTO \(table) (" + columns.map(Self.quoteIdentifier).joined(separator: ", ") + ") VALUES "
        let tail = suffix.isEmpty ? "" : " " + suffix
        let chunkStarts = Array(stride(from: 0, to: rows.count, by: rowsPerChunk))
        let ownTransaction = chunkStarts.count > 1 && transactionStatus == PQTRANS_IDLE

        if ownTransaction { try execute("BEGIN") }
        do throws(PostgresError) {
            var affected = 0
            for start in chunkStarts {
                let chunk = rows[start..<min(start + rowsPerChunk, rows.count)]
                let sql = head + Self.valuesList(rows: chunk.count, columns: columns.count) + tail
                // The VALUES list grows with the chunk, so the text rarely recurs: not worth a named statement.
                affected += try execute(sql, ParameterBuffer(chunk.joined()), reuse: false).affectedRows
            }
            if ownTransaction { try commit() }
            return affected
        } catch {
            if ownTransaction { rollbackIgnoringErrors() }
            throw error
        }
    }

    /// `($1,$2),($3,$4)…` for `rows` × `columns` placeholders.
    static func valuesList(rows: Int, columns: Int) -> String {
        var sql = ""
        sql.reserveCapacity(rows * columns * 8)
        var number = 1
        for row in 0..<rows {
            sql += row == 0 ? "(" : ",("
            for column in 0..<columns {
                if column > 0 { sql += "," }
                sql += "$"
                sql += String(number)
                number += 1
            }
            sql += ")"
        }
        return sql
    }
}
