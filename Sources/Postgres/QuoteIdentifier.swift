extension PostgresConnection {
    /// `name` as a quoted SQL identifier: wrapped in double quotes, inner double
    /// quotes doubled, exactly what `PQescapeIdentifier` produces for UTF-8, but
    /// without needing a connection. Case is preserved (`"Events"` ≠ `events`).
    /// For a schema-qualified name, quote each part and join them with ".".
    ///
    /// An identifier cannot contain U+0000; passing one is a programming error and traps.
    public static func quoteIdentifier(_ name: String) -> String {
        precondition(!name.utf8.contains(0), "an SQL identifier cannot contain U+0000")
        var quoted = "\""
        for character in name.unicodeScalars {
            if character == "\"" { quoted += "\"" }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }
}
