/// The `postgres` section.
public struct PostgresSettings: Sendable, Equatable {
    /// A libpq connection string (`VERIDOC_POSTGRES`); PG* environment variables also apply.
    public var connectionString = ""
    /// Whether recurring statements run as named prepared statements
    /// (`VERIDOC_PG_PREPARED`): false behind PgBouncer in transaction mode,
    /// which runs each transaction on another server session.
    public var preparedStatements = true

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let connectionStringFromFile = try section?.string("connectionString")
        connectionString = environment["VERIDOC_POSTGRES"] ?? connectionStringFromFile ?? connectionString
        let preparedStatementsFromEnvironment = try environment.bool("VERIDOC_PG_PREPARED")
        let preparedStatementsFromFile = try section?.bool("preparedStatements")
        preparedStatements = preparedStatementsFromEnvironment ?? preparedStatementsFromFile ?? preparedStatements
        try section?.finish()
    }
}
