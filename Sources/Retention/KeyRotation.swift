import Foundation
import Postgres
import Storage

/// Re-encrypts every stored value that is not under the active data key,
/// in batches of `batchSize` rows, each batch its own transaction. A row
/// changed or purged meanwhile is skipped (the UPDATE matches on the old
/// key id), so rotation can run beside workers and the purge loop.
public struct KeyRotation: Sendable {
    public let keys: DataKeyRing
    public let batchSize: Int

    public init(keys: DataKeyRing, batchSize: Int) {
        self.keys = keys
        self.batchSize = batchSize
    }

    public struct Outcome: Sendable, Equatable {
        public var reencrypted = 0
        /// Rows under a key id that is no longer configured: they cannot be
        /// read or rotated until that key is configured again.
        public var unknownKey = 0
    }

    public func run(on connection: PostgresConnection) throws -> Outcome {
        var outcome = Outcome()
        let readable = keys.ids.filter { $0 != keys.activeID }
        while !readable.isEmpty {
            let rows = try connection.execute(ElementValuesTable.sealed(underAnyOf: readable, limit: batchSize))
            if rows.rowCount == 0 { break }
            try connection.transaction { connection in
                for row in 0..<rows.rowCount {
                    guard let eventID = rows.string(row, "event_id"), let namespace = rows.string(row, "namespace"),
                          let element = rows.string(row, "element"), let until = rows.string(row, "retain_until"),
                          let keyID = rows.string(row, "key_id"), let nonce = rows.bytes(row, "nonce"), let ciphertext = rows.bytes(row, "ciphertext")
                    else { continue }
                    let plain = try ValueCipher.open(SealedValue(keyID: keyID, nonce: nonce, ciphertext: ciphertext),
                                                     eventID: eventID, namespace: namespace, element: element, keys: keys)
                    let sealed = try ValueCipher.seal(plain, eventID: eventID, namespace: namespace, element: element, keys: keys)
                    outcome.reencrypted += try connection.execute(ElementValuesTable.reseal(
                        eventID: eventID, namespace: namespace, element: element, retainUntil: until, fromKey: keyID,
                        keyID: sealed.keyID, nonce: sealed.nonce, ciphertext: sealed.ciphertext)).affectedRows
                }
            }
        }
        outcome.unknownKey = Int(try connection.execute(ElementValuesTable.countSealed(underNoneOf: keys.ids)).int(0, "count") ?? 0)
        return outcome
    }
}
