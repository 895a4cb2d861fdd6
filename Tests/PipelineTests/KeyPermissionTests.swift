import Foundation
import Pipeline
import Retention
import Testing
import TestIssuer
import Verification

/// Secret key files readable by other users are refused at start with a message
/// naming the setting and the file; no key material appears in the message.
@Suite struct KeyPermissionTests {
    let directory: URL
    let config: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-keyperm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let factory = try TestIssuer.EventFactory(now: Date(), seed: 5)
        config = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as! [String: Any]
        root["kafka"] = ["bootstrapServers": "127.0.0.1:1"]
        root["replay"] = ["nonceKeyFile": "nonce.key"]
        try JSONSerialization.data(withJSONObject: root).write(to: config)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("nonce.key").path,
                                       contents: Data(repeating: 0x41, count: 32).base64EncodedData(), attributes: [.posixPermissions: 0o600])
    }

    func chmod(_ relative: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory.appendingPathComponent(relative).path)
    }

    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let error as ConfigError { return error.message } catch { return "\(error)" }
    }

    @Test func privateKeysOnlyForTheirOwner() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(message { _ = try Configuration.load(from: config) } == nil)
        try chmod("pki/merchant-rotated.pem", 0o644)
        let refused = try #require(message { _ = try Configuration.load(from: config) })
        #expect(refused.contains("encryptionKeys[1]"))
        #expect(refused.contains("merchant-rotated.pem is readable by other users (mode 644); chmod 600"))
        #expect(!refused.contains("PRIVATE KEY"))
        try chmod("pki/merchant-rotated.pem", 0o604)
        #expect(message { _ = try Configuration.load(from: config) } != nil)
        // Group-readable by this process's own group (the Helm chart's 0440 + fsGroup): accepted.
        try chmod("pki/merchant-rotated.pem", 0o440)
        #expect(message { _ = try Configuration.load(from: config) } == nil)
    }

    /// The group rule judged by the rule itself, for any user: a file its group
    /// can read is refused unless the process is in that group. (Root would
    /// read the file either way; what is tested is the rule, not the kernel.)
    @Test func aGroupReadableFileIsRefusedUnlessTheProcessIsInItsGroup() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("pki/merchant-current.pem")
        try chmod("pki/merchant-current.pem", 0o640)
        var info = stat()
        #expect(stat(key.path, &info) == 0)
        let refused = try #require(KeyFile.permissionProblem(key, groups: []), "a group this process is not in can read it")
        #expect(refused.contains("readable by group \(info.st_gid)"))
        #expect(KeyFile.permissionProblem(key, groups: [info.st_gid]) == nil, "its own group may")
        try chmod("pki/merchant-current.pem", 0o600)
        #expect(KeyFile.permissionProblem(key, groups: []) == nil, "owner only needs no group")
    }

    /// The same through `Configuration.load`, with a group the process is really
    /// not in: making a file of such a group needs root, so this one runs as root only.
    @Test(.enabled(if: getuid() == 0, "changing a file's group to one this process is not in needs root"))
    func groupReadableByAForeignGroupIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("pki/merchant-current.pem").path
        #expect(chown(key, 0, 65534) == 0)
        try chmod("pki/merchant-current.pem", 0o640)
        let refused = try #require(message { _ = try Configuration.load(from: config) })
        #expect(refused.contains("readable by group 65534"))
        try chmod("pki/merchant-current.pem", 0o600)
        #expect(message { _ = try Configuration.load(from: config) } == nil)
    }

    @Test func nonceKeyOnlyForItsOwner() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment: [String: String] = [:]
        #expect(message { _ = try WorkerConfiguration.load(from: config, environment: environment) } == nil)
        try chmod("nonce.key", 0o644)
        let refused = try #require(message { _ = try WorkerConfiguration.load(from: config, environment: environment) })
        #expect(refused.hasPrefix("replay.nonceKeyFile: "))
        #expect(refused.contains("nonce.key is readable by other users (mode 644)"))
        #expect(!refused.contains("QUFB"))  // the key's base64
    }

    @Test func symlinkedKeysAreJudgedByTheirTarget() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Kubernetes secret volumes: file → ..data/file symlinks (mode 0777 on the link itself).
        let data = directory.appendingPathComponent("..data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let target = data.appendingPathComponent("data.key")
        try DataKeyRing.generateKeyFile(target)
        let link = directory.appendingPathComponent("data.key")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(try DataKeyRing.loadKeyFile(link).count == 32)
        try FileManager.default.moveItem(at: directory.appendingPathComponent("nonce.key"), to: data.appendingPathComponent("nonce.key"))
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("nonce.key"), withDestinationURL: data.appendingPathComponent("nonce.key"))
        #expect(message { _ = try WorkerConfiguration.load(from: config, environment: [:]) } == nil)
        try chmod("..data/nonce.key", 0o604)
        #expect(message { _ = try WorkerConfiguration.load(from: config, environment: [:]) }?.contains("readable by other users") == true)
    }
}
