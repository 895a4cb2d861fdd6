import Foundation
import JSON
@testable import Settings
import Testing
import TestSupport

/// The config file is read once, strictly: every object of every section
/// refuses a member it does not know, every setting its wrong type, and the
/// `VERIDOC_…` variables win over the file.
@Suite struct SettingsTests {
    static let base = URL(fileURLWithPath: "/etc/veridoc")

    static func settings(_ json: String, environment: [String: String] = [:]) throws -> VeridocSettings {
        try VeridocSettings(JSONParser().parse(json), baseURL: base, environment: environment)
    }

    /// The message of the refusal, or nil when the file was accepted.
    static func refusal(_ json: String, environment: [String: String] = [:]) -> String? {
        do {
            _ = try settings(json, environment: environment)
            return nil
        } catch let error as ConfigError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    static let tenant = #"{"id": "acme", "trustAnchors": ["pki/iaca.pem"]}"#

    @Test("a misspelt setting is refused in every section, at every depth, naming its path", arguments: [
        (#"{"postgress": {}}"#, "postgress"),
        (#"{"kafka": {"propertes": {"security.protocol": "SSL"}}}"#, "kafka.propertes"),
        (#"{"worker": {"batchsize": 100}}"#, "worker.batchsize"),
        (#"{"postgres": {"connectionstring": ""}}"#, "postgres.connectionstring"),
        (#"{"replay": {"nonceKey": "k"}}"#, "replay.nonceKey"),
        (#"{"observability": {"level": "info"}}"#, "observability.level"),
        (#"{"serve": {"prot": 8080}}"#, "serve.prot"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readerTokens": {"brandId": "b", "keyId": "k", "signingKey": "f", "alg": "ES256"}}]}"#,
         "tenants[0].readerTokens.alg"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "webReader": {"certificates": "c.pem", "privateKey": "k.pem", "certificate": "x"}}]}"#,
         "tenants[0].webReader.certificate"),
        (#"{"retention": {"purgeInterval": 5}}"#, "retention.purgeInterval"),
        (#"{"retention": {"dataKeys": [{"id": "k", "file": "f", "mode": 1}], "activeKey": "k"}}"#, "retention.dataKeys[0].mode"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "colour": "red"}]}"#, "tenants[0].colour"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readers": [{"id": "r", "publicKey": "k.pem", "privateKey": "x"}]}]}"#, "tenants[0].readers[0].privateKey"),
        (#"{"tenants": [{"id": "acme", "vicals": [{"file": "v", "anchors": ["a"], "url": "x"}]}]}"#, "tenants[0].vicals[0].url"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "retentionDefaults": [{"namespace": "n", "element": "e", "retention": {"intent": "willNotStore"}, "why": 1}]}]}"#,
         "tenants[0].retentionDefaults[0].why"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "retentionDefaults": [{"namespace": "n", "element": "e", "retention": {"intent": "mayStore", "dayz": 3}}]}]}"#,
         "tenants[0].retentionDefaults[0].retention"),
    ])
    func unknownSettingsAreRefused(_ json: String, path: String) {
        let message = Self.refusal(json)
        #expect(message?.hasPrefix(path) == true, "\(json): \(message ?? "accepted")")
    }

    @Test("a setting of the wrong type is refused, null included", arguments: [
        (#"{"worker": {"batchSize": "500"}}"#, "worker.batchSize"),
        (#"{"serve": {"readerTokenSeconds": 301}}"#, "serve.readerTokenSeconds"),
        (#"{"serve": {"loopbackOnly": "yes"}}"#, "serve.loopbackOnly"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "apiKeys": ["plain-key"]}]}"#, "tenants[0].apiKeys"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "apiKeys": ["sha256:5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"]}]}"#, "tenants[0].apiKeys"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readerTokens": {"brandId": "b", "signingKey": "f"}}]}"#, "tenants[0].readerTokens.keyId"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "webReader": {"certificates": "c.pem"}}]}"#, "tenants[0].webReader.privateKey"),
        (#"{"worker": {"batchSize": 2.5}}"#, "worker.batchSize"),
        (#"{"worker": {"batchSize": true}}"#, "worker.batchSize"),
        (#"{"worker": {"batchSize": null}}"#, "worker.batchSize"),
        (#"{"worker": {"batchSize": 0}}"#, "worker.batchSize"),
        (#"{"postgres": {"preparedStatements": 0}}"#, "postgres.preparedStatements"),
        (#"{"postgres": {"preparedStatements": "no"}}"#, "postgres.preparedStatements"),
        (#"{"kafka": {"properties": {"acks": ["all"]}}}"#, "kafka.properties.acks"),
        (#"{"kafka": {"properties": "acks=all"}}"#, "kafka.properties"),
        (#"{"kafka": []}"#, "kafka"),
        (#"{"tenants": {"id": "acme"}}"#, "tenants"),
        (#"{"tenants": [{"id": ""}]}"#, "tenants[0].id"),
        (#"{"tenants": [{"id": "acme", "teamId": null}]}"#, "tenants[0].teamId"),
        (#"{"tenants": [{"id": "acme", "merchantIds": ["m"]}]}"#, "tenants[0].teamId"),
        (#"{"tenants": [{"id": "acme", "trustAnchors": [""]}]}"#, "tenants[0].trustAnchors"),
    ])
    func wronglyTypedSettingsAreRefused(_ json: String, path: String) {
        let message = Self.refusal(json)
        #expect(message?.hasPrefix(path) == true, "\(json): \(message ?? "accepted")")
    }

    static let simulatorTenant = #"{"id": "acme-test", "merchantIds": ["m"], "teamId": "PassKit_Identity_Test_Team_ID", "encryptionKeys": ["k.pem"], "#

    /// A config of one test tenant: the Simulator's identifiers and `rest`.
    static func simulatorConfig(_ rest: String) -> String { "{\"tenants\": [" + simulatorTenant + rest + "]}" }

    static let testConditionRefusals: [(String, String)] = [
        (simulatorConfig(#""trustAnchors": ["a"], "testConditions": {"kinds": ["simulator"]}}"#), "tenants[0].testConditions"),
        (simulatorConfig(#""vicals": [{"file": "v", "anchors": ["a"]}], "testConditions": {"kinds": ["simulator"]}}"#), "tenants[0].testConditions"),
        (simulatorConfig(#""pinnedDocumentSigners": ["p"], "testConditions": {"kinds": ["developerProfile"]}}"#), "tenants[0].testConditions"),
        (simulatorConfig(#""testConditions": {"kinds": ["production"]}}"#), "tenants[0].testConditions.kinds"),
        (simulatorConfig(#""testConditions": {"kinds": []}}"#), "tenants[0].testConditions.kinds"),
        (simulatorConfig(#""testConditions": {}}"#), "tenants[0].testConditions.kinds"),
        (simulatorConfig(#""testConditions": {"kinds": ["simulator", "simulator"]}}"#), "tenants[0].testConditions.kinds"),
        (simulatorConfig(#""testConditions": {"kinds": ["simulator"], "anchors": ["a"]}}"#), "tenants[0].testConditions.anchors"),
        (simulatorConfig(#""testConditions": true}"#), "tenants[0].testConditions"),
        (#"{"tenants": [{"id": "t", "merchantIds": ["m"], "teamId": "TEAM123456", "testConditions": {"kinds": ["simulator"]}}]}"#,
         "tenants[0].testConditions.kinds"),
    ]

    @Test("test conditions are refused beside production trust, with an unknown kind, or a Simulator without its team ID",
          arguments: testConditionRefusals)
    func testConditionsAreRefused(_ json: String, path: String) {
        let message = Self.refusal(json)
        #expect(message?.hasPrefix(path + ":") == true, "\(json): \(message ?? "accepted")")
    }

    /// Registered readers: each id once (by its bytes), each with a key file.
    /// Origins as browsers report them, or the config is refused naming the entry: another spelling would never match.
    @Test func originsMustBeWhatBrowsersReport() throws {
        for good in ["https://shop.example.com", "https://shop.example.com:8443", "http://127.0.0.1:8080", "https://xn--caf-dma.example", "https://[::1]:4443"] {
            #expect(WebOrigin.problem(good) == nil, "\(good)")
        }
        for bad in ["shop.example.com", "https://shop.example.com/", "https://Shop.example.com", "https://shop.example.com:443", "http://shop.example:80",
                    "https://caf\u{00E9}.example", "https://user@shop.example", "https://shop.example?x", "https://shop.example:0",
                    "https://shop.example:65536", "https://shop.example:", "https://", "ftp://shop.example", "https://[::1", "https://shop.example:08080",
                    "http://shop.example.com"] {
            #expect(WebOrigin.problem(bad) != nil, "\(bad)")
        }
        let json = #"{"tenants": [{"id": "acme", "origins": ["https://shop.example.com", "https://shop.example.com/"]}]}"#
        do {
            _ = try VeridocSettings(JSONParser().parse(json), baseURL: URL(fileURLWithPath: "/"))
            Issue.record("a trailing slash loaded")
        } catch let error as ConfigError {
            #expect(error.message.hasPrefix("tenants[0].origins[1]: not a web origin as browsers report it"), "\(error.message)")
        }
    }

    @Test func readersAreReadAndDuplicatesRefused() throws {
        let json = #"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readers": [{"id": "r-1", "publicKey": "pki/r1.pem"}, {"id": "r-2", "publicKey": "pki/r2.pem"}]}]}"#
        #expect(try Self.settings(json).tenants[0].readers == [
            TenantSettings.Reader(id: "r-1", publicKey: "pki/r1.pem"), TenantSettings.Reader(id: "r-2", publicKey: "pki/r2.pem"),
        ])
        let twice = #"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readers": [{"id": "r-1", "publicKey": "a.pem"}, {"id": "r-1", "publicKey": "b.pem"}]}]}"#
        #expect(Self.refusal(twice)?.hasPrefix("tenants[0].readers[1].id: duplicate") == true, "\(Self.refusal(twice) ?? "accepted")")
        let keyless = #"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "readers": [{"id": "r-1"}]}]}"#
        #expect(Self.refusal(keyless)?.hasPrefix("tenants[0].readers[0].publicKey") == true, "\(Self.refusal(keyless) ?? "accepted")")
    }

    /// A webhook's `signingKey`: one file, or during a rotation up to four distinct ones.
    @Test func aWebhookSigningKeyIsOneFileOrARotationOfThem() throws {
        func hook(_ signingKey: String) -> String {
            #"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "webhooks": [{"id": "w", "url": "https://h.example/", "signingKey": \#(signingKey)}]}]}"#
        }
        #expect(try Self.settings(hook(#""k1.pem""#)).tenants[0].webhooks[0].signingKeys == ["k1.pem"])
        #expect(try Self.settings(hook(#"["k1.pem", "k2.pem"]"#)).tenants[0].webhooks[0].signingKeys == ["k1.pem", "k2.pem"])
        for refused in [#"[]"#, #"["k1.pem", "k1.pem"]"#, #"["a", "b", "c", "d", "e"]"#, #"[""]"#, #""""#, "7"] {
            let message = Self.refusal(hook(refused))
            #expect(message?.hasPrefix("tenants[0].webhooks[0].signingKey") == true, "\(refused): \(message ?? "accepted")")
        }
    }

    @Test func aTestTenantIsReadWithItsTestRoots() throws {
        let json = Self.simulatorConfig(#""testConditions": {"kinds": ["simulator", "developerProfile"], "trustAnchors": ["pki/apple-test-root.pem"]}}, {"id": "acme", "trustAnchors": ["a"]}"#)
        let tenants = try Self.settings(json).tenants
        #expect(tenants[0].testConditions == TenantSettings.TestConditions(kinds: [.simulator, .developerProfile], trustAnchors: ["pki/apple-test-root.pem"]))
        #expect(tenants[0].trustAnchors.isEmpty)
        #expect(tenants[1].testConditions == nil)
        let deviceOnly = #"{"tenants": [{"id": "t", "testConditions": {"kinds": ["developerProfile"]}}]}"#
        #expect(try Self.settings(deviceOnly).tenants[0].testConditions?.trustAnchors == [])
    }

    @Test func theEnvironmentWinsAndIsCheckedToo() throws {
        let file = #"{"worker": {"batchSize": 9, "threads": 2}, "kafka": {"groupId": "file", "properties": {"acks": "1"}}}"#
        let settings = try Self.settings(file, environment: ["VERIDOC_BATCH_SIZE": "7", "VERIDOC_KAFKA_GROUP_ID": "env",
                                                              "VERIDOC_KAFKA_PROPERTY_SASL_USERNAME": "svc"])
        #expect(settings.worker.batchSize == 7)
        #expect(settings.worker.threads == 2)
        #expect(settings.kafka.groupID == "env")
        #expect(settings.kafka.properties == ["acks": "1", "sasl.username": "svc"])
        #expect(Self.refusal(file, environment: ["VERIDOC_WORKERS": "many"])?.hasPrefix("VERIDOC_WORKERS") == true)
        #expect(Self.refusal(file, environment: ["VERIDOC_PG_PREPARED": "off"])?.hasPrefix("VERIDOC_PG_PREPARED") == true)
        // A file setting stays checked where the environment overrides it.
        #expect(Self.refusal(#"{"worker": {"batchSize": "x"}}"#, environment: ["VERIDOC_BATCH_SIZE": "7"]) != nil)
    }

    @Test func defaultsApplyWhereNothingIsSet() throws {
        let settings = try Self.settings("{}")
        #expect(settings.kafka == KafkaSettings())
        #expect(settings.worker.batchSize == 500 && settings.worker.threads == nil)
        #expect(settings.postgres.preparedStatements && settings.observability.port == 9464)
        #expect(settings.tenants.isEmpty && settings.replay.nonceKeyFile == nil)
    }

    @Test func librdkafkaPropertiesKeepTheirTextForm() throws {
        let settings = try Self.settings(#"{"kafka": {"properties": {"linger.ms": 5, "enable.idempotence": false, "client.id": "w1"}}}"#)
        #expect(settings.kafka.properties == ["linger.ms": "5", "enable.idempotence": "false", "client.id": "w1"])
    }

    @Test func aFileThatIsNotAConfigIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, contents, expected) in [("list.json", "[]", "not a JSON object"), ("broken.json", "{\"tenants\": [", "is not JSON"),
                                           ("twice.json", #"{"worker": {}, "worker": {}}"#, "is not JSON")] {
            let file = folder.appendingPathComponent(name)
            try Data(contents.utf8).write(to: file)
            #expect(throws: ConfigError.self) { try VeridocSettings.load(from: file, environment: [:]) }
            do { _ = try VeridocSettings.load(from: file, environment: [:]) } catch { #expect(error.message.contains(expected), "\(name): \(error.message)") }
        }
        #expect(throws: ConfigError.self) { try VeridocSettings.load(from: folder.appendingPathComponent("absent.json"), environment: [:]) }
    }

    // MARK: the schema, the examples and the reader agree

    static var repository: URL { Binaries.repository }

    static func json(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(contentsOf: repository.appendingPathComponent(path)))
    }

    /// Every config in the repository is accepted: the schema's example and the deployment examples.
    @Test func everyConfigInTheRepositoryIsAccepted() throws {
        var files = ["Schemas/examples/config.json"]
        let deploy = Self.repository.appendingPathComponent("deploy")
        let walker = FileManager.default.enumerator(atPath: deploy.path)
        while let path = walker?.nextObject() as? String {
            if path.hasSuffix(".json"), let object = try? Self.json("deploy/" + path) as? [String: Any], object["tenants"] != nil {
                files.append("deploy/" + path)
            }
        }
        #expect(files.count >= 2, "\(files)")
        for file in files {
            #expect(throws: Never.self, "\(file)") { try VeridocSettings.load(from: Self.repository.appendingPathComponent(file), environment: [:]) }
        }
    }

    /// Every object of the schema refuses unknown members, and the schema's
    /// example sets every setting the schema names, so the reader that accepts
    /// the example accepts everything the schema documents.
    @Test func theSchemaIsClosedAndItsExampleSetsEverySetting() throws {
        let schema = try #require(try Self.json("Schemas/config.schema.json") as? [String: Any])
        let definitions = schema["$defs"] as? [String: Any] ?? [:]
        let example = try Self.json("Schemas/examples/config.json")
        var missing: [String] = []
        var open: [String] = []

        func resolved(_ node: [String: Any]) -> [String: Any] {
            guard let reference = node["$ref"] as? String, reference.hasPrefix("#/$defs/") else { return node }
            return resolved(definitions[String(reference.dropFirst(8))] as? [String: Any] ?? [:])
        }
        func walk(_ node: [String: Any], _ values: [Any], _ path: String) {
            let node = resolved(node)
            if let properties = node["properties"] as? [String: Any] {
                if node["additionalProperties"] as? Bool != false { open.append(path) }
                for (name, child) in properties where name != "$schema" {
                    let present = values.compactMap { ($0 as? [String: Any])?[name] }
                    if present.isEmpty { missing.append(path + "." + name) }
                    walk(child as? [String: Any] ?? [:], present, path + "." + name)
                }
            }
            if let items = node["items"] as? [String: Any] {
                walk(items, values.flatMap { $0 as? [Any] ?? [] }, path + "[]")
            }
        }
        walk(schema, [example], "")
        #expect(open.isEmpty, "objects of the schema that accept unknown members: \(open)")
        #expect(missing.isEmpty, "settings of the schema the example does not set: \(missing)")
    }

    @Test func theServeSectionAndItsVariables() throws {
        let defaults = try Self.settings("{}").serve
        #expect(defaults == ServeSettings())
        #expect(defaults.port == 8080 && defaults.readerTokenSeconds == 300)
        let file = #"{"serve": {"port": 9000, "loopbackOnly": true, "burstPerKey": 7, "readerTokenSeconds": 60}}"#
        let read = try Self.settings(file).serve
        #expect(read.port == 9000 && read.loopbackOnly && read.burstPerKey == 7 && read.readerTokenSeconds == 60)
        let overridden = try Self.settings(file, environment: ["VERIDOC_SERVE_PORT": "9100", "VERIDOC_SERVE_LOOPBACK_ONLY": "false"]).serve
        #expect(overridden.port == 9100 && !overridden.loopbackOnly)
        let tenant = try #require(try Self.settings(#"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "apiKeys": ["sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"], "readerTokens": {"brandId": "b", "keyId": "k", "signingKey": "f.pem"}}]}"#).tenants.first)
        #expect(tenant.apiKeyHashes.count == 1)
        #expect(tenant.readerTokens == TenantSettings.ReaderTokens(brandID: "b", keyID: "k", signingKey: "f.pem"))
    }

    /// The HTTP front's limits, of serve's API port and of the metrics listener.
    @Test func theHTTPFrontLimits() throws {
        let defaults = try Self.settings("{}")
        #expect(defaults.serve.maxConnectionsPerAddress == 64 && defaults.serve.headerTimeoutSeconds == 10
                && defaults.serve.bodyTimeoutSeconds == 30 && defaults.serve.maxWaitingPollsPerTenant == 32)
        #expect(defaults.observability.maxConnections == 64 && defaults.observability.maxConnectionsPerAddress == 16
                && defaults.observability.headerTimeoutSeconds == 2 && defaults.observability.bodyTimeoutSeconds == 10)
        let read = try Self.settings(#"{"serve": {"maxConnectionsPerAddress": 5, "headerTimeoutSeconds": 3, "bodyTimeoutSeconds": 4, "maxWaitingPollsPerTenant": 0}, "observability": {"maxConnections": 9, "maxConnectionsPerAddress": 2, "headerTimeoutSeconds": 1, "bodyTimeoutSeconds": 6}}"#)
        #expect(read.serve.maxConnectionsPerAddress == 5 && read.serve.headerTimeoutSeconds == 3 && read.serve.bodyTimeoutSeconds == 4
                && read.serve.maxWaitingPollsPerTenant == 0)
        #expect(read.observability.maxConnections == 9 && read.observability.maxConnectionsPerAddress == 2
                && read.observability.headerTimeoutSeconds == 1 && read.observability.bodyTimeoutSeconds == 6)
        for (json, path) in [(#"{"serve": {"headerTimeoutSeconds": 0}}"#, "serve.headerTimeoutSeconds"),
                             (#"{"serve": {"maxConnectionsPerAddress": 0}}"#, "serve.maxConnectionsPerAddress"),
                             (#"{"observability": {"maxConnections": 4}}"#, "observability.maxConnections")] {
            let message = Self.refusal(json)
            #expect(message?.hasPrefix(path) == true, "\(json): \(message ?? "accepted")")
        }
    }
}

/// A tenant setting is one typed field, read in `TenantSettings.init`, and
/// one entry of the schema: the two agree, and every setting misspelt is
/// refused by its name.
@Suite struct TenantSettingsKeysTests {
    static func schemaTenantKeys() throws -> Set<String> {
        let schema = try #require(try SettingsTests.json("Schemas/config.schema.json") as? [String: Any])
        let tenant = try #require((schema["$defs"] as? [String: Any])?["tenant"] as? [String: Any])
        return Set(try #require(tenant["properties"] as? [String: Any]).keys)
    }

    @Test func theSchemaAndTheReaderAgreeOnTheTenantSettings() throws {
        let read = Set(TenantSettings.knownKeys)
        #expect(read.count == TenantSettings.knownKeys.count, "a key read twice: \(TenantSettings.knownKeys)")
        #expect(read.contains("id") && read.contains("merchantIds") && read.contains("testConditions"))
        let schema = try Self.schemaTenantKeys()
        #expect(read.subtracting(schema).isEmpty, "read but not in the schema: \(read.subtracting(schema).sorted())")
        #expect(schema.subtracting(read).isEmpty, "in the schema but not read: \(schema.subtracting(read).sorted())")
    }

    @Test func everyTenantSettingMisspeltIsRefusedByName() throws {
        for key in TenantSettings.knownKeys where key != "id" {
            let misspelt = String(key.dropLast()) + "z"
            let message = SettingsTests.refusal(#"{"tenants": [{"id": "acme", "\#(misspelt)": 1}]}"#)
            #expect(message == "tenants[0].\(misspelt): unknown setting", "\(key): \(message ?? "accepted")")
        }
        #expect(SettingsTests.refusal(#"{"tenant": [{"id": "acme"}]}"#) == "tenant: unknown setting")
    }
}
