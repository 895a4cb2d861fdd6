import Foundation
import Postgres
import Testing
import TestIssuer
import TestSupport

/// Transport security is passed through, not reimplemented: the libpq
/// connection string (sslmode, sslrootcert, …) reaches libpq as written, and
/// `kafka.properties` (security.protocol, ssl.*, sasl.*) reach librdkafka verbatim.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct TransportSecurityTests {
    /// A PostgreSQL cluster of its own that accepts TLS connections only
    /// (hostssl in pg_hba.conf), with a server certificate from a self-made CA.
    @Test func tlsOnlyPostgresWithVerifyFull() throws {
        let cluster = try OwnPostgres()
        let pki = URL(fileURLWithPath: "/tmp/veridoc-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: pki, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: pki) }
        try makeCA("ca", in: pki)
        try makeCA("other-ca", in: pki)
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                     "-subj", "/CN=127.0.0.1"], in: pki)
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n".write(to: pki.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
                     "-days", "2", "-extfile", "ext.cnf"], in: pki)

        // ssl=on with the server pair in the data directory; only hostssl lines.
        let data = cluster.directory.appendingPathComponent("data")
        for name in ["server.pem", "server.key"] {
            let target = data.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: pki.appendingPathComponent(name), to: target)
            chmod(target.path, 0o600)
            if getuid() == 0, let owner = getpwnam("postgres") { chown(target.path, owner.pointee.pw_uid, owner.pointee.pw_gid) }
        }
        let conf = data.appendingPathComponent("postgresql.conf")
        let settings = try String(contentsOf: conf, encoding: .utf8) + "\nssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n"
        try settings.write(to: conf, atomically: false, encoding: .utf8)
        try "local all all trust\nhostssl all all 127.0.0.1/32 trust\n".write(to: data.appendingPathComponent("pg_hba.conf"), atomically: false, encoding: .utf8)
        try cluster.pause()
        try cluster.resume()

        let ca = pki.appendingPathComponent("ca.pem").path
        let verified = cluster.connectionString + " sslmode=verify-full sslrootcert=\(ca)"
        let connection = try PostgresConnection(connectionString: verified)
        #expect(try connection.execute("SELECT ssl::text AS ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").string(0, "ssl") == "true")
        connection.close()

        // Without TLS there is no pg_hba line to match.
        do {
            _ = try PostgresConnection(connectionString: cluster.connectionString + " sslmode=disable")
            Issue.record("a plaintext connection was accepted")
        } catch {
            #expect(error.message.contains("no encryption") || error.message.contains("pg_hba.conf"), "\(error.message)")
        }
        // A server certificate from another CA is refused by verify-full.
        do {
            _ = try PostgresConnection(connectionString: cluster.connectionString + " sslmode=verify-full sslrootcert=\(pki.appendingPathComponent("other-ca.pem").path)")
            Issue.record("a server certificate from an untrusted CA was accepted")
        } catch {
            #expect(error.message.contains("certificate verify failed"), "\(error.message)")
        }

        // The worker takes the connection string as written: `veridoc migrate` over verify-full.
        let config = try workerConfig(in: pki, postgres: verified, kafkaProperties: [:])
        let run = try runVeridoc(["migrate", "--config", config.path])
        #expect(run.status == 0, "\(run.stderr)")
        let check = try PostgresConnection(connectionString: verified)
        defer { check.close() }
        #expect(try check.execute("SELECT count(*) AS count FROM schema_migrations").int(0, "count") ?? 0 > 0)
    }

    /// librdkafka validates the properties it is given; its error names the property (or the rejected value).
    @Test(arguments: [
        (["security.protocol": "tls-please"], "security.protocol"),
        // The error names ssl.ca.location; librdkafka's log line before it names the file.
        (["security.protocol": "ssl", "ssl.ca.location": "/nonexistent/veridoc-ca.pem"], "ssl.ca.location failed"),
        (["security.protocol": "ssl", "ssl.ca.location": "/nonexistent/veridoc-ca.pem"], "/nonexistent/veridoc-ca.pem"),
        (["security.protocol": "sasl_plaintext", "sasl.mechanisms": "NOT-A-MECHANISM"], "Unsupported SASL mechanism: NOT-A-MECHANISM"),
    ])
    func kafkaPropertiesReachLibrdkafka(_ properties: [String: String], _ named: String) throws {
        let database = try TestDatabase()
        let directory = URL(fileURLWithPath: "/tmp/veridoc-kprops-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try workerConfig(in: directory, postgres: database.connectionString, kafkaProperties: properties)
        let run = try runVeridoc(["run", "--config", config.path], timeout: 60)
        #expect(run.status == 2, "a configuration error: \(run.stderr)")
        #expect(run.stderr.contains(named), "\(run.stderr)")
        #expect(run.stderr.contains("config: kafka.properties: librdkafka"), "a sentence for the operator: \(run.stderr)")
        #expect(!run.stderr.contains("KafkaError("), "\(run.stderr)")
        print("librdkafka said: " + (run.stderr.split(separator: "\n").last.map(String.init) ?? ""))
    }

    // MARK: helpers

    func makeCA(_ name: String, in directory: URL) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(name).key",
                     "-out", "\(name).pem", "-days", "2", "-subj", "/CN=Veridoc Test \(name)"], in: directory)
    }

    func openssl(_ arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("openssl \(arguments.prefix(2).joined(separator: " ")) failed") }
    }

    func workerConfig(in directory: URL, postgres: String, kafkaProperties: [String: String]) throws -> URL {
        let factory = try TestIssuer.EventFactory(now: Date(), seed: 77)
        let file = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        root["kafka"] = ["bootstrapServers": "127.0.0.1:1", "properties": kafkaProperties]
        root["postgres"] = ["connectionString": postgres]
        root["replay"] = ["nonceKeyFile": "nonce.key"]
        root["observability"] = ["port": 0]
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("nonce.key").path,
                                           contents: Data(repeating: 7, count: 32).base64EncodedData(), attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root).write(to: file)
        return file
    }

    func runVeridoc(_ arguments: [String], timeout: TimeInterval = 90) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = Binaries.veridoc
        process.arguments = arguments
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate(); throw TestFailure("veridoc \(arguments[0]) did not finish") }
        return (process.terminationStatus, (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")
    }
}
