import Crypto
import Foundation
import Testing
import Verification

/// Every file the config names goes through `KeyFile`: one rule for
/// permissions, size and the decoding of secrets, and messages that name the
/// setting and the path but never the contents.
@Suite struct KeyFileTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o600) throws -> URL {
        let url = folder.appendingPathComponent(name)
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: mode]))
        return url
    }

    func refusal(_ body: () throws(ConfigError) -> Void) -> String? {
        do { try body(); return nil } catch { return error.message }
    }

    @Test func aSecretIsBase64WithSurroundingWhitespaceOrElseItsRawBytes() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = (0..<32).map { UInt8($0 * 7 & 0xff) }
        let encoded = Array(Data(key).base64EncodedString().utf8)
        for (name, bytes) in [("plain", encoded), ("newline", encoded + [0x0a]), ("spaces", [0x20, 0x09] + encoded + [0x0d, 0x0a])] {
            #expect(try KeyFile.secret(write(name, bytes), setting: "s", length: 32) == key, "\(name)")
            #expect(try KeyFile.secret(write(name, bytes), setting: "s", length: 32...) == key, "\(name)")
        }
        // Not base64: the bytes as they are, trailing newline and all.
        let raw = Array(repeating: UInt8(0xff), count: 31) + [0x0a]
        #expect(try KeyFile.secret(write("raw", raw), setting: "s", length: 32) == raw)
        #expect(try KeyFile.secret(write("raw", raw), setting: "s", length: 32...) == raw)
        // The same rule for both secrets of a deployment.
        #expect(refusal { () throws(ConfigError) in _ = try KeyFile.secret(try! write("short", Array("c2hvcnQ=\n".utf8)), setting: "replay.nonceKeyFile", length: 32...) }?
            .hasPrefix("replay.nonceKeyFile: ") == true)
        #expect(refusal { () throws(ConfigError) in _ = try KeyFile.secret(try! write("long", encoded + encoded), setting: "retention.dataKeys[0].file", length: 32) }?
            .hasPrefix("retention.dataKeys[0].file: ") == true)
    }

    @Test func aSecretOthersCanReadIsRefusedNamingTheSettingNotTheContents() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = Array("QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n".utf8)
        let open = try write("open.key", secret, mode: 0o644)
        let message = try #require(refusal { () throws(ConfigError) in _ = try KeyFile.secret(open, setting: "replay.nonceKeyFile", length: 32...) })
        #expect(message.hasPrefix("replay.nonceKeyFile: ") && message.contains("readable by other users"), "\(message)")
        #expect(!message.contains("QUFB"))
        // Published material (certificates, public keys, VICALs) may be read by anyone.
        #expect(try KeyFile.read(open, setting: "t", .published) == secret)
        // A private key: the same rule, read by OpenSSL.
        let pem = try write("key.pem", Array(try PrivateKey.generate(curve: .p256).pkcs8PEM().utf8), mode: 0o644)
        let keyMessage = try #require(refusal { () throws(ConfigError) in _ = try KeyFile.privateKey(pem, setting: "tenants[0].encryptionKeys[0]") })
        #expect(keyMessage.hasPrefix("tenants[0].encryptionKeys[0]: private key file ") && keyMessage.contains("chmod 600"), "\(keyMessage)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pem.path)
        #expect(throws: Never.self) { try KeyFile.privateKey(pem, setting: "k") }
    }

    @Test func anAbsentOrOversizedFileIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let absent = folder.appendingPathComponent("absent.pem")
        #expect(refusal { () throws(ConfigError) in _ = try KeyFile.read(absent, setting: "tenants[0].trustAnchors[0]", .published) }
                == "tenants[0].trustAnchors[0]: cannot read \(absent.path)")
        // Sparse: the size is what counts, not what was written.
        let large = try write("large.cbor", [])
        let handle = try FileHandle(forWritingTo: large)
        try handle.truncate(atOffset: UInt64(KeyFile.maxBytes + 1))
        try handle.close()
        for content in [KeyFile.Content.published, .secret] {
            let message = refusal { () throws(ConfigError) in _ = try KeyFile.read(large, setting: "tenants[0].vicals[0].file", content) }
            #expect(message?.hasPrefix("tenants[0].vicals[0].file: ") == true && message?.contains("larger than") == true, "\(message ?? "accepted")")
        }
    }
}
