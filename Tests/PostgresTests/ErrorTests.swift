import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct ErrorTests {
    @Test func syntaxErrorIsAServerErrorAndNotTransient() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELEC 1") }
        #expect(error?.sqlState == "42601")
        #expect(error?.kind == .server)
        #expect(error?.isTransient == false)
        // The session survives a statement error.
        #expect(try connection.execute("SELECT 1 AS one").int(0, "one") == 1)
    }

    @Test func uniqueViolationNamesTheConstraintButNotTheValue() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).people (document_number text CONSTRAINT people_document_unique PRIMARY KEY)")
            let secret = "P<UTOERIKSSON<<ANNA<MARIA-L898902C3"
            try connection.execute("INSERT INTO \(schema).people VALUES ($1)", [.text(secret)])
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO \(schema).people VALUES ($1)", [.text(secret)])
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "people_document_unique")
            #expect(error?.table == "people")
            #expect(error?.isTransient == false)
            #expect(error?.message.contains("people_document_unique") == true)
            #expect(error.map { !$0.description.contains(secret) && !"\($0)".contains("L898902C3") } == true)
        }
    }

    @Test func dataExceptionMessagesDoNotQuoteTheRejectedInput() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let error = #expect(throws: PostgresError.self) {
            try connection.execute("SELECT $1::uuid", [.text("secret-not-a-uuid-123")])
        }
        #expect(error?.sqlState == "22P02")
        #expect(error.map { !$0.description.contains("secret-not-a-uuid-123") } == true)
        #expect(error?.message.hasPrefix("invalid input syntax for type uuid") == true)
    }

    @Test func textWithNULIsRejectedBeforeSending() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT $1", [.text("a\u{0}b")]) }
        #expect(error?.kind == .client)
        #expect(error?.sqlState == "22021")
        #expect(connection.isConnected)
    }

    @Test func closedConnectionThrowsAClientError() throws {
        let connection = try TestServer.connect()
        connection.close()
        connection.close()  // idempotent
        #expect(!connection.isConnected)
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(error?.kind == .client)
        #expect(error?.isTransient == false)
    }

    @Test func statementTimeoutIsTransient() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        try connection.execute("SET statement_timeout TO 50")
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT pg_sleep(5)") }
        #expect(error?.sqlState == "57014")
        #expect(error?.isTransient == true)
        #expect(connection.isConnected)
    }
}
