import Postgres
import Storage
import TestSupport

/// What each database suite here starts from: a fresh database the
/// product's migrations have made, and a connection to it.
struct MigratedDatabase {
    let database: TestDatabase
    let connection: PostgresConnection

    init() throws {
        database = try TestDatabase()
        connection = try database.connect()
        try Migrations.apply(on: connection)
    }
}

/// A suite adopts this with one stored property, `migrated`; the suite's
/// `init()` (which Swift Testing calls once per test) makes a fresh database.
protocol MigratedDatabaseSuite {
    var migrated: MigratedDatabase { get }
    init(migrated: MigratedDatabase)
}

extension MigratedDatabaseSuite {
    init() throws { self.init(migrated: try MigratedDatabase()) }

    var connection: PostgresConnection { migrated.connection }
}
