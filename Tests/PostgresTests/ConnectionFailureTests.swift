import Foundation
import Postgres
import Testing

/// Needs no server: nothing listens on port 1. A refused connection is
/// answered at once; one retried or waited on for ever would hold the suite.
@Test func connectingToAClosedPortFailsAndIsTransient() throws {
    let error = #expect(throws: PostgresError.self) {
        try PostgresConnection(connectionString: "host=127.0.0.1 port=1 user=postgres dbname=postgres")
    }
    #expect(error?.kind == .connection)
    #expect(error?.isTransient == true)
}

@Test func aMalformedConnectionStringIsNotEchoed() throws {
    let error = #expect(throws: PostgresError.self) {
        try PostgresConnection(connectionString: "host=127.0.0.1 password='s3cret")
    }
    #expect(error?.kind == .client)
    #expect(error.map { !$0.description.contains("s3cret") } == true)
}

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct ConnectionFailureTests {
    @Test func aTerminatedBackendGivesATransientErrorAndResetRecovers() throws {
        let victim = try TestServer.connect()
        let admin = try TestServer.connect()
        defer { victim.close(); admin.close() }
        let pid = try #require(victim.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
        try TestServer.terminate(pid, from: admin)

        let error = #expect(throws: PostgresError.self) { try victim.execute("SELECT 1") }
        #expect(error?.isTransient == true)
        #expect(error?.kind == .connection)
        #expect(!victim.isConnected)

        try victim.reset()
        #expect(victim.isConnected)
        let newPid = try victim.execute("SELECT pg_backend_pid() AS pid").int(0, "pid")
        #expect(newPid != nil && newPid != pid)
    }

    struct BodyGaveUp: Error {}

    @Test func aTransactionWhoseConnectionDiesSurfacesTheBodysError() throws {
        let victim = try TestServer.connect()
        let admin = try TestServer.connect()
        defer { victim.close(); admin.close() }
        let pid = try #require(victim.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
        var lost: PostgresError?
        #expect(throws: BodyGaveUp.self) {
            try victim.transaction { tx in
                try admin.execute("SELECT pg_terminate_backend($1::int, 5000)", [.int(pid)])
                do { try tx.execute("SELECT 1") } catch let error as PostgresError { lost = error }
                throw BodyGaveUp()  // ROLLBACK then cannot run; this error must come out, not ROLLBACK's.
            }
        }
        #expect(lost?.kind == .connection)
        try victim.reset()
        #expect(try victim.execute("SELECT 1 AS one").int(0, "one") == 1)
    }

    /// Runs a private cluster through `scripts/test-postgres` so pausing it
    /// cannot disturb tests running concurrently against the shared one.
    @Test(.enabled(if: ClusterScript.serverBinariesInstalled, "needs PostgreSQL server binaries in /usr/lib/postgresql/*/bin or PG_BINDIR"))
    func aPausedServerFailsTransientlyAndResetWorksAfterResume() throws {
        let directory = "/tmp/veridoc-pg-pause-" + TestServer.randomName("c")
        let exports = try ClusterScript.run("start", directory)
        defer { _ = try? ClusterScript.run("destroy", directory) }
        let connectionString = try #require(ClusterScript.export("VERIDOC_TEST_POSTGRES", in: exports))

        let connection = try PostgresConnection(connectionString: connectionString)
        defer { connection.close() }
        #expect(try connection.execute("SELECT 1 AS one").int(0, "one") == 1)

        try ClusterScript.run("pause", directory)
        let whilePaused = #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(whilePaused?.isTransient == true)
        // A reset against the paused server ends with a transient error
        // (connect_timeout bounds it), never a hang.
        let resetWhilePaused = #expect(throws: PostgresError.self) { try connection.reset() }
        #expect(resetWhilePaused?.isTransient == true)

        let resumed = try ClusterScript.run("resume", directory)
        #expect(ClusterScript.export("VERIDOC_TEST_POSTGRES", in: resumed) == connectionString)
        try connection.reset()
        #expect(try connection.execute("SELECT 1 AS one").int(0, "one") == 1)
    }
}
