import Postgres
import Storage
import TestSupport

/// What each database suite here starts from: a fresh database the
/// product's migrations have made, and a connection to it.
enum MigratedDatabase {
    static func open() throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase()
        let connection = try database.connect()
        try Migrations.apply(on: connection)
        return (database, connection)
    }
}
