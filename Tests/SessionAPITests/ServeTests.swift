import CommandLineSupport
import Crypto
import Foundation
import KafkaMock
import TestIssuer
import Testing
import TestSupport
@testable import SessionAPI
import Verification

/// One `veridoc serve` process on loopback, with two tenants: acme (two
/// keys, reader tokens) and globex (a key, no reader tokens).
final class ServeFixture {
    static let acmeKey = "vdk_acme-key-for-tests"
    static let globexKey = "vdk_globex-key-for-tests"
    /// A key of its own for the rate-limit test, so its bucket is nobody else's.
    static let burstKey = "vdk_acme-burst-key"
    static let identifier = "reader-instance-0042"
    static let merchantID = "merchant.com.example.acme"
    static let origin = "https://shop.example.com"

    let folder: URL
    let signingKey: PrivateKey
    /// The Ed25519 key acme's webhook endpoint `primary` signs `v1a` with.
    let webhookKey: PrivateKey
    let serve: VeridocProcess
    let port: Int
    /// serve's metrics and probe listener (`observability.port`).
    let metricsPort: Int
    /// Where serve keeps sessions and sends requests: the test PostgreSQL and an in-process mock cluster.
    let database: TestDatabase
    let cluster: MockCluster

    /// A third tenant's key (initech, configured for app sessions like acme), present with `serveSettings`.
    static let initechKey = "vdk_initech-key-for-tests"

    /// `serveSettings` go over the `serve` section (and add the tenant initech).
    /// `kafkaProperties` go into `kafka.properties` (librdkafka's, e.g. a shorter `message.timeout.ms`).
    init(burst: Int, tls: Bool = false, maxSessionSeconds: Int = 120, serveSettings: [String: Any]? = nil,
         kafkaProperties: [String: String] = [:]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        database = try TestDatabase()
        cluster = try MockCluster(brokers: 1)
        try cluster.createTopic("veridoc.requests", partitions: 1)
        signingKey = try PrivateKey.generate(curve: .p256)
        let keyFile = folder.appendingPathComponent("reader-token-key.pem")
        try Self.writeSecret(try signingKey.pkcs8PEM(), to: keyFile)
        webhookKey = try PrivateKey.generateEd25519()
        try Self.writeSecret(try webhookKey.pkcs8PEM(), to: folder.appendingPathComponent("hook-ed25519.pem"))
        try Self.writeSecret(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(), to: folder.appendingPathComponent("nonce.key"))
        if tls { try Self.writeCertificate(in: folder) }
        let config = try Self.writeConfig(in: folder, signingKey: "reader-token-key.pem", burst: burst,
                                          services: (database.connectionString, cluster.bootstrapServers), tls: tls,
                                          maxSessionSeconds: maxSessionSeconds, serveSettings: serveSettings, kafkaProperties: kafkaProperties)
        serve = try VeridocProcess(command: "serve", config: config, name: "serve")
        port = try #require(serve.port(loggedAs: "session API listening"), "serve did not start: \(serve.log.suffix(1500))")
        metricsPort = try #require(serve.port(loggedAs: "observability listening"))
    }

    deinit {
        serve.kill()
        cluster.close()
        try? FileManager.default.removeItem(at: folder)
    }

    static func writeSecret(_ text: String, to url: URL, mode: Int = 0o600) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
            throw TestFailure("cannot write \(url.path)")
        }
    }

    /// A self-signed P-256 certificate for 127.0.0.1 (`tls-certificate.pem`) and its key (`tls-key.pem`, 0600), by the openssl command.
    static func writeCertificate(in folder: URL) throws {
        let key = folder.appendingPathComponent("tls-key.pem").path
        let made = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-out", folder.appendingPathComponent("tls-certificate.pem").path, "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ], mergingStandardError: true)
        guard made.status == 0 else { throw TestFailure("openssl req: \(made.output)") }
        guard chmod(key, 0o600) == 0 else { throw TestFailure("chmod \(key)") }
    }

    /// The web reader identity acme signs its DeviceRequests with: a self-signed P-256
    /// certificate (`web-reader.pem`) and its key (`web-reader-key.pem`, 0600), by the openssl command.
    static func writeWebReader(in folder: URL, creating: Bool = false) throws {
        if creating { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try writeSelfSigned("web-reader", in: folder)
    }

    /// `<name>.pem`, a self-signed P-256 certificate for two days (with
    /// `extraArguments` for openssl req), and `<name>-key.pem`, its key (0600).
    static func writeSelfSigned(_ name: String, in folder: URL, extraArguments: [String] = []) throws {
        let key = folder.appendingPathComponent("\(name)-key.pem").path
        let made = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-out", folder.appendingPathComponent("\(name).pem").path, "-days", "2", "-subj", "/O=Acme/CN=shop.example.com",
        ] + extraArguments, mergingStandardError: true)
        guard made.status == 0 else { throw TestFailure("openssl req: \(made.output)") }
        guard chmod(key, 0o600) == 0 else { throw TestFailure("chmod \(key)") }
    }

    /// The OpenID4VP verifier identity acme signs request objects with: a
    /// self-signed P-256 certificate whose dNSName is the origin's host
    /// (`openid4vp-verifier.pem`) and its key (0600), by the openssl command.
    static func writeOpenID4VPVerifier(in folder: URL) throws {
        try writeSelfSigned("openid4vp-verifier", in: folder, extraArguments: ["-addext", "subjectAltName=DNS:shop.example.com"])
    }

    init(services: (postgres: String, kafka: String)) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        database = try TestDatabase()
        cluster = try MockCluster(brokers: 1)
        signingKey = try PrivateKey.generate(curve: .p256)
        try Self.writeSecret(try signingKey.pkcs8PEM(), to: folder.appendingPathComponent("reader-token-key.pem"))
        webhookKey = try PrivateKey.generateEd25519()
        try Self.writeSecret(try webhookKey.pkcs8PEM(), to: folder.appendingPathComponent("hook-ed25519.pem"))
        try Self.writeSecret(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(), to: folder.appendingPathComponent("nonce.key"))
        let config = try Self.writeConfig(in: folder, signingKey: "reader-token-key.pem", burst: 10, services: services)
        serve = try VeridocProcess(command: "serve", config: config, name: "serve")
        port = try #require(serve.port(loggedAs: "session API listening"), "serve did not start: \(serve.log.suffix(1500))")
        metricsPort = try #require(serve.port(loggedAs: "observability listening"))
    }

    static func writeConfig(in folder: URL, signingKey: String, burst: Int, services: (postgres: String, kafka: String)? = nil,
                            tls: Bool = false, maxSessionSeconds: Int = 120, serveSettings: [String: Any]? = nil,
                            kafkaProperties: [String: String] = [:]) throws -> URL {
        try writeSecret(try PrivateKey.generate(curve: .p256).pkcs8PEM(), to: folder.appendingPathComponent("merchant.pem"))
        if !FileManager.default.fileExists(atPath: folder.appendingPathComponent("hook-ed25519.pem").path) {
            try writeSecret(try PrivateKey.generateEd25519().pkcs8PEM(), to: folder.appendingPathComponent("hook-ed25519.pem"))
        }
        try writeSecret(try PrivateKey.generateEd25519().pkcs8PEM(), to: folder.appendingPathComponent("hook-ed25519-next.pem"))
        try writeSecret("whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(), to: folder.appendingPathComponent("hook.whsec"))
        try writeWebReader(in: folder)
        try writeOpenID4VPVerifier(in: folder)
        // Serve loads the tenants as the worker does, trust anchors included.
        try TestIssuer.PEM.certificates([try TestIssuer.Authority(now: Date()).iaca]).write(to: folder.appendingPathComponent("iaca.pem"), atomically: true, encoding: .utf8)
        var config: [String: Any] = [
            "tenants": [
                ["id": "acme", "trustAnchors": ["iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: acmeKey), APIKeyring.setting(forKey: burstKey)],
                 "merchantIds": [merchantID], "teamId": "TEAM123456", "origins": [origin], "encryptionKeys": ["merchant.pem"],
                 "webReader": ["certificates": "web-reader.pem", "privateKey": "web-reader-key.pem"],
                 "openID4VPVerifier": ["certificates": "openid4vp-verifier.pem", "privateKey": "openid4vp-verifier-key.pem"],
                 "maxSessionSeconds": maxSessionSeconds,
                 "readerTokens": ["brandId": "BRAND00001", "keyId": "KEYID00001", "signingKey": signingKey],
                 // One endpoint signs v1a as well, one only v1, one with two keys (a rotation).
                 "webhooks": [
                    ["id": "primary", "url": "https://hooks.acme.example/veridoc", "secrets": ["hook.whsec"], "signingKey": "hook-ed25519.pem"],
                    ["id": "hmac-only", "url": "https://hooks.acme.example/other", "secrets": ["hook.whsec"]],
                    ["id": "rotating", "url": "https://hooks.acme.example/third", "signingKey": ["hook-ed25519.pem", "hook-ed25519-next.pem"]],
                 ]],
                ["id": "globex", "trustAnchors": ["iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: globexKey)]],
            ],
            "worker": ["maxEventBytes": 1024],
            "serve": ["port": 0, "loopbackOnly": true, "requestsPerSecondPerKey": 1, "burstPerKey": burst, "readerTokenSeconds": 240],
            "observability": ["port": 0],
        ]
        if let serveSettings {
            config["serve"] = (config["serve"] as! [String: Any]).merging(serveSettings) { $1 }
            var tenants = config["tenants"] as! [[String: Any]]
            tenants.append(["id": "initech", "trustAnchors": ["iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: initechKey)],
                            "merchantIds": [merchantID], "teamId": "TEAM123456", "encryptionKeys": ["merchant.pem"]])
            config["tenants"] = tenants
        }
        if tls {
            var serve = config["serve"] as! [String: Any]
            serve["tls"] = ["certificateFile": "tls-certificate.pem", "keyFile": "tls-key.pem"]
            config["serve"] = serve
        }
        if let services {
            config["postgres"] = ["connectionString": services.postgres]
            config["kafka"] = ["bootstrapServers": services.kafka, "properties": kafkaProperties] as [String: Any]
            config["replay"] = ["nonceKeyFile": "nonce.key"]
        }
        let url = folder.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: url)
        return url
    }

    func post(_ body: String, key: String? = ServeFixture.acmeKey, contentType: String? = "application/json",
              path: String = "/v1/reader-tokens", headers extra: [(String, String)] = []) throws -> RawHTTP.Response {
        var headers = extra
        if let key { headers.append(("Authorization", "Bearer \(key)")) }
        if let contentType { headers.append(("Content-Type", contentType)) }
        return try RawHTTP.request("POST", path, port: port, headers: headers, body: Array(body.utf8))
    }

    /// The error's code and field, after checking the body is the contract's error object.
    func refusal(_ response: RawHTTP.Response) throws -> (code: String, field: String?) {
        #expect(response.headers["content-type"] == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any], "\(response.body)")
        #expect(Set(object.keys).isSubset(of: ["error", "detail", "field"]))
        #expect(object["detail"] is String)
        let code = try #require(object["error"] as? String)
        #expect(APIError.allCodes.contains(code))
        return (code, object["field"] as? String)
    }

}

/// `veridoc serve` over real HTTP: the probes, the contract, and every
/// refusal of `POST /v1/reader-tokens` with its status and code, then a
/// token that the `openssl` command verifies.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct ServeTests {
    let fixture: ServeFixture
    var port: Int { fixture.port }
    var serve: VeridocProcess { fixture.serve }

    init() throws { fixture = try ServeFixture(burst: 1_000) }

    func post(_ body: String, key: String? = ServeFixture.acmeKey, contentType: String? = "application/json") throws -> RawHTTP.Response {
        try fixture.post(body, key: key, contentType: contentType)
    }

    func refusal(_ response: RawHTTP.Response) throws -> (code: String, field: String?) { try fixture.refusal(response) }

    @Test func probesMetricsAndTheContract() throws {
        let health = try RawHTTP.request("GET", "/healthz", port: port)
        #expect(health.status == 200)
        #expect(health.body == "ok\n")
        #expect(health.headers["cache-control"] == "no-store")
        #expect(try RawHTTP.request("GET", "/readyz", port: port).status == 200)
        // The metrics listener answers the probes too: the orchestrator's go there.
        #expect(try RawHTTP.request("GET", "/healthz", port: fixture.metricsPort).status == 200)
        let probed = try RawHTTP.request("GET", "/readyz", port: fixture.metricsPort)
        #expect(probed.status == 200 && probed.body == "ready\n")
        let counted = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
            .values("veridoc_api_requests_total").first { $0.labels == ["route": "readyz", "status": "200"] }?.value
        #expect((counted ?? 0) >= 2, "the metrics listener's /readyz is counted with the API port's (the readiness alert reads it)")
        let head = try RawHTTP.request("HEAD", "/healthz", port: port)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers["content-length"] == "3", "HEAD says how long the GET's body is")

        let served = try RawHTTP.request("GET", "/openapi.json", port: port)
        #expect(served.status == 200)
        let file = try String(contentsOf: Binaries.repository.appendingPathComponent("Schemas/session-api.openapi.json"), encoding: .utf8)
        #expect(served.body == file, "the served contract is the one in Schemas/")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any])
        let errorCodes = ((((document["components"] as? [String: Any])?["schemas"] as? [String: Any])?["Error"] as? [String: Any])?["properties"]
            as? [String: Any])?["error"] as? [String: Any]
        #expect(errorCodes?["enum"] as? [String] == APIError.allCodes, "the contract lists exactly the codes the API answers")
        let paths = Set((document["paths"] as? [String: Any] ?? [:]).keys)
        #expect(paths == Set(APIRoute.allCases.map(\.template)), "every route is in the contract and nothing else")

        let missing = try RawHTTP.request("GET", "/v1/nothing", port: port)
        #expect(missing.status == 404)
        #expect(try refusal(missing).code == "not_found")
        let wrongMethod = try RawHTTP.request("GET", "/v1/reader-tokens", port: port)
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["allow"] == "POST")
        #expect(try refusal(wrongMethod).code == "method_not_allowed")
        #expect(try RawHTTP.request("POST", "/healthz", port: port).status == 405)
    }

    @Test func aTokenForTheCallersTenantThatOpenSSLVerifies() throws {
        let before = Date()
        let response = try post(#"{"readerInstanceIdentifier":"\#(ServeFixture.identifier)"}"#)
        #expect(response.status == 201, "\(response.body)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["token", "expiresAt"])
        let decoded = try ReaderTokenTests.decode(try #require(object["token"] as? String))
        #expect(decoded.header["kid"] as? String == "KEYID00001")
        #expect(decoded.claims["iss"] as? String == "BRAND00001")
        #expect(decoded.claims["sub"] as? String == ServeFixture.identifier)
        #expect(decoded.claims["aud"] as? String == "apple-identityservices-v1")
        let issued = try #require(decoded.claims["iat"] as? Int)
        let expires = try #require(decoded.claims["exp"] as? Int)
        #expect(expires - issued == 240, "serve.readerTokenSeconds")
        #expect(abs(Double(issued) - before.timeIntervalSince1970) < 30)
        let expiresAt = try #require(object["expiresAt"] as? String)
        #expect(try Date(expiresAt, strategy: .iso8601) == Date(timeIntervalSince1970: TimeInterval(expires)))
        let verdict = try OpenSSLVerify.check(signature: decoded.signature, over: Array(decoded.signingInput.utf8),
                                              publicKey: fixture.signingKey.publicKey, in: fixture.folder)
        #expect(verdict.status == 0, "openssl: \(verdict.output)")

        #expect(try RawHTTP.request("GET", "/metrics", port: port).status == 404, "the API port has no /metrics")
        let metrics = try RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body
        let parsed = try PrometheusText(metrics)
        func value(_ name: String, _ labels: [String: String]) -> Double? { parsed.values(name).first { $0.labels == labels }?.value }
        #expect(value("veridoc_api_reader_tokens_total", [:]).map { $0 >= 1 } == true)
        for tenant in ["acme", "globex"] { #expect(!metrics.contains(tenant), "no tenant id where no credentials are asked") }
        #expect(value("veridoc_api_requests_total", ["route": "reader_tokens", "status": "201"]).map { $0 >= 1 } == true)
        #expect(value("veridoc_api_request_seconds_count", ["route": "reader_tokens"]).map { $0 >= 1 } == true)
        for secret in [ServeFixture.acmeKey, ServeFixture.identifier, "BRAND00001"] {
            #expect(!metrics.contains(secret))
            #expect(!serve.log.contains(secret))
        }
    }

    /// `GET /v1/webhook-keys`: the caller's tenant's v1a keys, as Standard
    /// Webhooks writes them and as a JWK, and no other tenant's.
    @Test func theWebhookKeysOfTheCallersTenant() throws {
        let raw = try #require(fixture.webhookKey.publicKey.ed25519Raw)
        let acme = try RawHTTP.request("GET", "/v1/webhook-keys", port: port, headers: [("Authorization", "Bearer \(ServeFixture.acmeKey)")])
        #expect(acme.status == 200, "\(acme.body)")
        #expect(acme.headers["content-type"] == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(acme.body.utf8)) as? [String: Any])
        let keys = try #require(object["keys"] as? [[String: Any]])
        #expect(keys.count == 3, "the endpoints with signing keys, each of their keys: \(acme.body)")
        let next = try PrivateKey(pem: String(decoding: try Data(contentsOf: fixture.folder.appendingPathComponent("hook-ed25519-next.pem")), as: UTF8.self))
        let rotating = keys.filter { $0["endpoint"] as? String == "rotating" }.compactMap { $0["publicKey"] as? String }
        #expect(rotating == [raw, try #require(next.publicKey.ed25519Raw)].map { "whpk_" + Data($0).base64EncodedString() },
                "both keys of the rotating endpoint, in the configured order")
        let key = try #require(keys.first)
        #expect(key["endpoint"] as? String == "primary")
        #expect(key["algorithm"] as? String == "Ed25519")
        #expect(key["publicKey"] as? String == "whpk_" + Data(raw).base64EncodedString())
        let jwk = try #require(key["jwk"] as? [String: String])
        #expect(jwk["kty"] == "OKP" && jwk["crv"] == "Ed25519")
        #expect(jwk["x"].flatMap { Data(base64Encoded: $0.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=") }
                == Data(raw), "the JWK's x is the same key, base64url")

        let globex = try RawHTTP.request("GET", "/v1/webhook-keys", port: port, headers: [("Authorization", "Bearer \(ServeFixture.globexKey)")])
        #expect(globex.status == 200 && globex.body == #"{"keys":[]}"#, "another tenant sees none of acme's")
        let anonymous = try RawHTTP.request("GET", "/v1/webhook-keys", port: port)
        #expect(anonymous.status == 401)
        let head = try RawHTTP.request("HEAD", "/v1/webhook-keys", port: port, headers: [("Authorization", "Bearer \(ServeFixture.acmeKey)")])
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(try RawHTTP.request("POST", "/v1/webhook-keys", port: port, headers: [("Authorization", "Bearer \(ServeFixture.acmeKey)")]).status == 405)
    }

    /// The request id a client sends comes back and finds serve's access line;
    /// the metrics name the build.
    @Test func theRequestIDFindsTheAccessLine() throws {
        let id = "serve-test-" + UUID().uuidString.lowercased()
        let answer = try fixture.post(#"{"readerInstanceIdentifier":"\#(ServeFixture.identifier)"}"#, headers: [("X-Request-Id", id)])
        #expect(answer.status == 201 && answer.headers["x-request-id"] == id)
        let generated = try RawHTTP.request("GET", "/healthz", port: port).headers["x-request-id"]
        #expect(generated?.utf8.count == 32 && generated != id)
        var line: [String: Any]?
        let logged = eventually(10) {
            line = serve.log.split(separator: "\n").lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0["requestId"] as? String == id }
            return line != nil
        }
        #expect(logged, "no access line with the request id")
        #expect(line?["route"] as? String == "reader_tokens" && line?["tenant"] as? String == "acme" && line?["status"] as? String == "201")
        #expect(!serve.log.contains(ServeFixture.identifier) && !serve.log.contains(ServeFixture.acmeKey))
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
        #expect(metrics.values("veridoc_build_info").first?.labels["version"] == Version.veridoc)
        #expect((metrics.values("process_resident_memory_bytes").first?.value ?? 0) > 0)
    }

    @Test func everyRefusalHasItsStatusAndCode() throws {
        let valid = #"{"readerInstanceIdentifier":"r1"}"#
        let cases: [(String, RawHTTP.Response, UInt32, String, String?)] = [
            ("no key", try post(valid, key: nil), 401, "unauthorized", nil),
            ("a key no tenant holds", try post(valid, key: "vdk_guess"), 401, "unauthorized", nil),
            ("a tenant without reader tokens", try post(valid, key: ServeFixture.globexKey), 409, "not_configured", nil),
            ("not JSON", try post(valid, contentType: "text/plain"), 415, "unsupported_media_type", nil),
            ("no media type", try post(valid, contentType: nil), 415, "unsupported_media_type", nil),
            ("malformed", try post("{\"readerInstanceIdentifier\":"), 400, "malformed_json", nil),
            ("an array", try post("[]"), 400, "malformed_json", nil),
            ("an unknown field", try post(#"{"readerInstanceIdentifier":"r1","brandId":"x"}"#), 400, "unknown_field", "brandId"),
            ("a missing field", try post("{}"), 400, "missing_field", "readerInstanceIdentifier"),
            ("a number", try post(#"{"readerInstanceIdentifier":7}"#), 400, "invalid_field", "readerInstanceIdentifier"),
            ("spaces", try post(#"{"readerInstanceIdentifier":"r 1"}"#), 400, "invalid_field", "readerInstanceIdentifier"),
            ("too long", try post(#"{"readerInstanceIdentifier":"\#(String(repeating: "r", count: 257))"}"#), 400, "invalid_field", "readerInstanceIdentifier"),
            ("over maxEventBytes", try post(#"{"readerInstanceIdentifier":"\#(String(repeating: "r", count: 2_000))"}"#), 413, "body_too_large", nil),
        ]
        for (name, response, status, code, field) in cases {
            #expect(response.status == Int(status), "\(name): \(response.status) \(response.body)")
            let refusal = try refusal(response)
            #expect(refusal.code == code, "\(name)")
            #expect(refusal.field == field, "\(name)")
        }
        #expect(cases[0].1.headers["www-authenticate"] == "Bearer")
    }

    /// A chunked body has no Content-Length to refuse early: the daemon
    /// counts it as it arrives and answers 413 once past the limit.
    @Test func aChunkedBodyPastTheLimitIs413() throws {
        let chunk = String(repeating: "a", count: 700)
        let hex = String(chunk.utf8.count, radix: 16)
        let request = "POST /v1/reader-tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer \(ServeFixture.acmeKey)\r\n"
            + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "\(hex)\r\n\(chunk)\r\n\(hex)\r\n\(chunk)\r\n0\r\n\r\n"
        let response = try RawHTTP.exchange(Array(request.utf8), port: port)
        #expect(response.status == 413)
        #expect(try refusal(response).code == "body_too_large")
    }

    @Test func sigtermStopsItWithExitZero() throws {
        #expect(serve.terminate(timeout: 10) == 0, "\(serve.log.suffix(500))")
        #expect(serve.log.contains("stopping the session API"))
    }
}

/// Its own process: the burst is a setting of the whole API, 5 here.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct ServeRateLimitTests {
    @Test func aKeyPastItsRateIsToldWhenToComeBack() throws {
        let fixture = try ServeFixture(burst: 5)
        func post(_ body: String, key: String = ServeFixture.acmeKey) throws -> RawHTTP.Response { try fixture.post(body, key: key) }
        func refusal(_ response: RawHTTP.Response) throws -> (code: String, field: String?) { try fixture.refusal(response) }
        var statuses: [Int] = []
        var retryAfter: String?
        for _ in 0..<8 {
            let response = try post(#"{"readerInstanceIdentifier":"r1"}"#, key: ServeFixture.burstKey)
            statuses.append(response.status)
            if response.status == 429 {
                retryAfter = response.headers["retry-after"]
                #expect(try refusal(response).code == "too_many_requests")
            }
        }
        #expect(statuses.prefix(5).allSatisfy { $0 == 201 }, "the burst of 5 goes through: \(statuses)")
        #expect(statuses.contains(429), "\(statuses)")
        #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true)
        // Another key of the same tenant has a bucket of its own.
        #expect(try post(#"{"readerInstanceIdentifier":"r1"}"#).status == 201)
    }
}

/// Configurations `serve` must refuse at start, with exit 2 and the setting named.
@Suite struct ServeConfigurationTests {
    @Test func aSigningKeyOthersCanReadIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServeFixture.writeSecret(try PrivateKey.generate(curve: .p256).pkcs8PEM(), to: folder.appendingPathComponent("open.pem"), mode: 0o644)
        try ServeFixture.writeSecret(try PrivateKey.generate(curve: .p384).pkcs8PEM(), to: folder.appendingPathComponent("p384.pem"))
        for (file, expected) in [("open.pem", "chmod 600"), ("p384.pem", "P-256"), ("absent.pem", "cannot read")] {
            let config = try ServeFixture.writeConfig(in: folder, signingKey: file, burst: 1)
            let result = try Subprocess.run(Binaries.veridoc, ["serve", "--config", config.path], mergingStandardError: true)
            #expect(result.status == 2, "\(file): \(result.output)")
            #expect(result.output.contains("tenants[0].readerTokens.signingKey"), "\(file): \(result.output)")
            #expect(result.output.contains(expected), "\(file): \(result.output)")
        }
    }
}

/// `serve.tls`: HTTPS by libmicrohttpd itself, checked by curl against the
/// certificate; the same port refuses plain HTTP, and a key file others can
/// read is refused at start.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct ServeTLSTests {
    @Test func httpsWithTheConfiguredCertificate() throws {
        let fixture = try ServeFixture(burst: 100, tls: true)
        let url = "https://127.0.0.1:\(fixture.port)"
        let certificate = fixture.folder.appendingPathComponent("tls-certificate.pem").path
        let curl = URL(fileURLWithPath: "/usr/bin/curl")
        let health = try Subprocess.run(curl, ["-sS", "--cacert", certificate, "\(url)/healthz"], mergingStandardError: true)
        #expect(health.status == 0 && health.output == "ok\n", "\(health.output)")
        let token = try Subprocess.run(curl, ["-sS", "--cacert", certificate, "-H", "Authorization: Bearer \(ServeFixture.acmeKey)",
                                              "-H", "Content-Type: application/json", "-d", #"{"readerInstanceIdentifier":"r-1"}"#,
                                              "-w", "\n%{http_code}", "\(url)/v1/reader-tokens"], mergingStandardError: true)
        #expect(token.status == 0 && token.output.hasSuffix("\n201"), "\(token.output)")
        // Without trusting the certificate, curl refuses the server; plain HTTP gets no HTTP answer.
        #expect(try Subprocess.run(curl, ["-sS", "\(url)/healthz"], mergingStandardError: true).status != 0)
        let plain = try? RawHTTP.request("GET", "/healthz", port: fixture.port, timeout: 3)
        #expect(plain?.status != 200, "the TLS port does not answer plain HTTP")
    }

    @Test func aKeyOthersCanReadIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServeFixture.writeSecret(try PrivateKey.generate(curve: .p256).pkcs8PEM(), to: folder.appendingPathComponent("reader-token-key.pem"))
        try ServeFixture.writeCertificate(in: folder)
        _ = chmod(folder.appendingPathComponent("tls-key.pem").path, 0o644)
        let config = try ServeFixture.writeConfig(in: folder, signingKey: "reader-token-key.pem", burst: 1, tls: true)
        let result = try Subprocess.run(Binaries.veridoc, ["serve", "--config", config.path], mergingStandardError: true)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("serve.tls.keyFile") && result.output.contains("chmod 600"), "\(result.output)")
    }
}

/// `/readyz` is PostgreSQL and the broker: serve starts without either, and
/// says which one it is waiting for.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct ServeReadinessTests {
    @Test func notReadyWithoutTheDatabaseOrTheBroker() throws {
        let database = try TestDatabase()
        let cluster = try MockCluster(brokers: 1)
        defer { cluster.close() }
        for (services, reason) in [(("host=127.0.0.1 port=1 connect_timeout=2", cluster.bootstrapServers), "postgres unreachable"),
                                   ((database.connectionString, "127.0.0.1:1"), "kafka unreachable")] {
            let fixture = try ServeFixture(services: services)
            let ready = try RawHTTP.request("GET", "/readyz", port: fixture.port, timeout: 20)
            #expect(ready.status == 503 && ready.body == reason + "\n", "\(reason): \(ready.status) \(ready.body)")
            #expect(try RawHTTP.request("GET", "/healthz", port: fixture.port).status == 200, "alive while not ready")
        }
    }
}
