import Crypto
import Foundation

/// One stored value, encrypted: AES-256-GCM under a data key, with a fresh
/// 96-bit nonce per row. The additional data binds the ciphertext to its
/// row's event id, namespace, element and key id, so a database writer
/// cannot move a value to another person or element without decryption failing.
public struct SealedValue: Sendable, Equatable {
    public let keyID: String
    public let nonce: [UInt8]
    public let ciphertext: [UInt8]

    public init(keyID: String, nonce: [UInt8], ciphertext: [UInt8]) {
        self.keyID = keyID
        self.nonce = nonce
        self.ciphertext = ciphertext
    }
}

public enum ValueCipher {
    static let label = Array("veridoc.element-value.v1".utf8)

    /// label ‖ for each field: 4-byte big-endian length ‖ UTF-8 (unambiguous for any names).
    static func additionalData(keyID: String, eventID: String, namespace: String, element: String) -> [UInt8] {
        var out = label
        for field in [keyID, eventID, namespace, element] {
            let bytes = Array(field.utf8)
            let count = UInt32(bytes.count)
            out += [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
            out += bytes
        }
        return out
    }

    public static func seal(_ value: [UInt8], eventID: String, namespace: String, element: String, keys: DataKeyRing) throws(CryptoError) -> SealedValue {
        let nonce = secureRandomBytes(12)
        let aad = additionalData(keyID: keys.activeID, eventID: eventID, namespace: namespace, element: element)
        return SealedValue(keyID: keys.activeID, nonce: nonce, ciphertext: try AESGCM.seal(value, key: keys.activeKey, nonce: nonce, authenticating: aad))
    }

    public static func open(_ sealed: SealedValue, eventID: String, namespace: String, element: String, keys: DataKeyRing) throws(RetentionError) -> [UInt8] {
        guard let key = keys.key(sealed.keyID) else { throw RetentionError("data key \(sealed.keyID) is not configured") }
        let aad = additionalData(keyID: sealed.keyID, eventID: eventID, namespace: namespace, element: element)
        do {
            return try AESGCM.open(sealed.ciphertext, key: key, nonce: sealed.nonce, authenticating: aad)
        } catch {
            throw RetentionError("a stored value of event \(eventID) does not authenticate under data key \(sealed.keyID)")
        }
    }
}
