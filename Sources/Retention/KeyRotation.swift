import Foundation
import Postgres

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
            let rows = try connection.execute("""
                SELECT event_id, namespace, element, retain_until::text AS retain_until, key_id, nonce, ciphertext
                FROM element_values WHERE key_id = ANY($1::text[]) LIMIT $2
                """, [.textArray(readable), .int(Int64(batchSize))])
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
                    outcome.reencrypted += try connection.execute("""
                        UPDATE element_values SET key_id = $1, nonce = $2, ciphertext = $3
                        WHERE event_id = $4 AND namespace = $5 AND element = $6 AND retain_until = $7::timestamptz AND key_id = $8
                        """, [.text(sealed.keyID), .bytes(sealed.nonce), .bytes(sealed.ciphertext), .text(eventID), .text(namespace),
                              .text(element), .text(until), .text(keyID)]).affectedRows
                }
            }
        }
        outcome.unknownKey = Int(try connection.execute(
            "SELECT count(*) AS count FROM element_values WHERE NOT (key_id = ANY($1::text[]))", [.textArray(keys.ids)]).int(0, "count") ?? 0)
        return outcome
    }
}
