import Foundation
import Testing
import TestSupport

/// `docker compose --profile loadgen up` verifies something: the compose
/// services' commands (init.sh, loadgen-fixture, the worker on
/// deploy/compose/config.json, loadgen), run by deploy/compose/check-wiring
/// without containers against the dev broker and a test database.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct ComposeWiringTests {
    @Test func theComposeLoadgensEventsVerifyInTheComposeWorker() throws {
        let database = try TestDatabase()
        let script = Binaries.repository.appendingPathComponent("deploy/compose/check-wiring")
        let run = try CLI.run([Binaries.folder.path, database.connectionString, "300"], binary: script)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("acme verified"), "\(run.stdout)")
    }
}
