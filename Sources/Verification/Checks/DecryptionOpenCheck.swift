import Crypto
import JOSE

/// `decryption.open`: HPKE (RFC 9180) opens the ciphertext with the tenant's
/// key and the session transcript as info, or, for OpenID4VP, the JWE opens
/// with the key its kid named (ECDH-ES, AES-GCM).
enum DecryptionOpenCheck: RequestCheck {
    static let name = CheckName.decryptionOpen
    static let reasons: [ReasonCode] = [.decryptionFailed]
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let key = request.key, let transcript = request.transcript else { return }
        let ciphertext: ArraySlice<UInt8>
        let encapsulatedKey: [UInt8]
        switch request.envelope {
        case .apple(let envelope):
            (ciphertext, encapsulatedKey) = (envelope.ciphertext, envelope.ephemeralPublicKey)
        case .annexC(let encrypted, _):
            (ciphertext, encapsulatedKey) = (encrypted.ciphertext, encrypted.encapsulatedKey)
        case .jwe(let jwe):
            do throws(JOSEError) {
                request.plaintext = try jwe.decrypt(with: key.privateKey)
                report.pass(name)
            } catch {
                report.fail(name, .decryptionFailed, error.detail)
            }
            return
        case .plain, .vpToken, nil:
            return
        }
        do {
            request.plaintext = try HPKE.open(ciphertext, encapsulatedKey: encapsulatedKey, info: transcript.encoded, recipient: key.privateKey)
            report.pass(name)
        } catch .authenticationFailed {
            report.fail(name, .decryptionFailed, "HPKE authentication failed: the ciphertext was not sealed to this key and session transcript, or was altered")
        } catch {
            report.fail(name, .decryptionFailed, "HPKE encapsulated key is not a valid P-256 public key")
        }
    }
}
