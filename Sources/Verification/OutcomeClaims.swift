import CBOR
import MDoc
import Crypto
import Foundation
import JSON

/// `data.claims` of an outcome: the values of the elements the request
/// asked for, whatever its intent to retain, sealed with
/// HPKE (the suite Apple uses: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
/// AES-128-GCM) to the tenant's `outcomeRecipientKey`, so only the
/// integration that asked can read them; every other consumer of the
/// outcome topic (analytics) sees ciphertext.
///
/// Plaintext: the CBOR map `{namespace: {element: value}}`, each value the
/// exact CBOR bytes the holder disclosed (tags such as full-date kept).
/// HPKE info: `"veridoc.outcome.claims.v1"`, 0x00, the request id, so a
/// sealed block cannot be replayed under another request. AAD is empty.
public enum OutcomeClaims {
    public static let infoLabel = "veridoc.outcome.claims.v1"
    public static let suite = "DHKEM-P256-HKDF-SHA256/HKDF-SHA256/AES-128-GCM"

    public static func info(requestID: String) -> [UInt8] {
        Array(infoLabel.utf8) + [0] + Array(requestID.utf8)
    }

    /// The disclosed issuer-signed elements the request asked for, as the
    /// claims plaintext; nil when there are none. `willNotStore` means the
    /// business does not keep a value, not that it cannot see it: such values
    /// are sealed here like the others, and live only as long as the outcome
    /// that carries them (docs/privacy.md says where). Elements disclosed
    /// without being asked for are left out (data minimisation). Released
    /// values (`VerificationResult.releasingElementValues()`) are gone: the
    /// worker seals before it releases.
    public static func plaintext(of result: VerificationResult) -> [UInt8]? {
        let requested = RequestedElementIndex(result.requestedElements)
        var spaces: [(String, [CBOR.MapEntry])] = []
        var spaceIndex: [Identifier: Int] = [:]
        var seen = Set<[Identifier]>()
        for element in result.documents.flatMap(\.elements) {
            guard requested[namespace: element.namespace, element: element.identifier] != nil,
                  let value = element.value, seen.insert([Identifier(element.namespace), Identifier(element.identifier)]).inserted
            else { continue }
            let entry = CBOR.MapEntry(.text(element.identifier), .preEncoded(Array(value.encoded)))
            if let index = spaceIndex[Identifier(element.namespace)] {
                spaces[index].1.append(entry)
            } else {
                spaceIndex[Identifier(element.namespace)] = spaces.count
                spaces.append((element.namespace, [entry]))
            }
        }
        guard !spaces.isEmpty else { return nil }
        return CBOR.map(spaces.map { CBOR.MapEntry(.text($0.0), .map($0.1)) }).encoded()
    }

    /// `data.claims`: the HPKE output as standard base64.
    struct Sealed {
        let enc: String
        let ciphertext: String

        /// Members in sorted key order, as the outcome's bytes have them.
        func write(to out: inout JSONStream) {
            out.beginObject()
            out.key("ciphertext"); out.string(ciphertext)
            out.key("contentType"); out.string("application/cbor")
            out.key("enc"); out.string(enc)
            out.key("suite"); out.string(OutcomeClaims.suite)
            out.endObject()
        }

        var jsonValue: JSONValue {
            ["suite": .string(OutcomeClaims.suite), "contentType": "application/cbor", "enc": .string(enc), "ciphertext": .string(ciphertext)]
        }
    }

    /// The `data.claims` object, or nil when there is nothing to seal (or sealing failed,
    /// in which case the outcome carries names only rather than anything in clear).
    static func sealed(_ result: VerificationResult, to recipient: PublicKey) -> Sealed? {
        guard result.isAccepted, let requestID = result.requestID, let plaintext = plaintext(of: result),
              let sealed = try? HPKE.seal(plaintext, info: info(requestID: requestID), recipient: recipient)
        else { return nil }
        return Sealed(enc: Data(sealed.encapsulatedKey).base64EncodedString(), ciphertext: Data(sealed.ciphertext).base64EncodedString())
    }

    /// For the integration (and tests): opens `data.claims` with the recipient's private key.
    public static func open(_ claims: [String: Any], requestID: String, recipient: PrivateKey) throws(CryptoError) -> [UInt8] {
        guard let enc = (claims["enc"] as? String).flatMap({ Data(base64Encoded: $0) }),
              let ciphertext = (claims["ciphertext"] as? String).flatMap({ Data(base64Encoded: $0) })
        else { throw .malformedEncoding("data.claims needs base64 enc and ciphertext") }
        return try HPKE.open(Array(ciphertext), encapsulatedKey: Array(enc), info: info(requestID: requestID), recipient: recipient)
    }
}
