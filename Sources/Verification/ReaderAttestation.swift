import Crypto
import Foundation

/// A proximity reader's statement that it ran the session a submission
/// carries (`data.readerAuthentication` of an iso-device-response event).
///
/// A device MAC proves the holder's device only to whoever held the reader's
/// ephemeral private key, and in this flow the submitter supplies that key:
/// anyone holding a credential's issuer-signed part (which every relying
/// party receives in clear) can pick a reader key and MAC any transcript.
/// So a MAC counts only when the reader that held the key is authenticated
/// by something no credential contains: a P-256 key registered for the
/// reader in the tenant's `readers`, whose private half stays on the reader
/// device (for an iPhone, in its Secure Enclave), signing the exact triple it
/// forwards and the time (docs/device-authentication.md).
public struct ReaderAttestation: Sendable, Equatable {
    /// The reader instance identifier the tenant registered the key under.
    public let readerID: String
    /// When the reader signed, as the exact RFC 3339 text it signed.
    public let signedAtText: String
    public let signedAt: Date
    /// ECDSA P-256 / SHA-256, as r ‖ s (64 bytes: CryptoKit's `rawRepresentation`).
    public let signature: [UInt8]

    /// The longest reader id, as for tenant ids: ids are configuration keys and appear in outcomes.
    public static let maxReaderIDLength = 256

    public init(readerID: String, signedAtText: String, signedAt: Date, signature: [UInt8]) {
        self.readerID = readerID
        self.signedAtText = signedAtText
        self.signedAt = signedAt
        self.signature = signature
    }

    /// What the reader signs: a fixed label, the SHA-256 of each of the three
    /// fields exactly as the event carries them decoded (responseData,
    /// sessionTranscript, ephemeralReaderKey, the last empty when absent),
    /// then the tenant, the reader id and the time, each length-prefixed
    /// (two bytes, big-endian), so that no two statements share their bytes.
    public static func signedBytes(tenant: String, readerID: String, signedAtText: String, response: [UInt8], transcript: [UInt8],
                                   readerKey: [UInt8]?) -> [UInt8] {
        var bytes = Array(label.utf8) + [0]
        bytes += sha256(response) + sha256(transcript) + sha256(readerKey ?? [])
        for part in [tenant, readerID, signedAtText] {
            let utf8 = Array(part.utf8)
            bytes += [UInt8(truncatingIfNeeded: utf8.count >> 8), UInt8(truncatingIfNeeded: utf8.count)] + utf8
        }
        return bytes
    }

    public static let label = "VeridocReaderAttestation_1"
}
