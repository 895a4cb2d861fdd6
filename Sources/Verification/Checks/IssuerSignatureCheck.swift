import Crypto
import MDoc

/// `issuer.signature`: issuerAuth (COSE_Sign1, RFC 9052) verifies with the
/// document signer's key under an algorithm that key can make.
enum IssuerSignatureCheck: DocumentCheck {
    static let name = CheckName.issuerSignature
    static let reasons: [ReasonCode] = [.issuerSignatureInvalid, .payloadUnsupported]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        let label = document.label
        let issuerAuth = document.document.issuerSigned.issuerAuth
        guard let algorithm = report.algorithm(of: issuerAuth, context: "\(label) issuerAuth", failing: name, invalid: .issuerSignatureInvalid) else { return }
        // No usable document signer certificate (issuer.chain failed): the input is
        // missing, so the check is skipped, as reason-codes.md says of such checks.
        guard let signer = document.signer else {
            report.skip(name)
            return
        }
        guard let key = try? signer.facts.publicKey.get() else {
            report.fail(name, .payloadUnsupported, "\(label): document signer key type is not supported")
            return
        }
        guard key.type == algorithm.keyType else {
            report.fail(name, .issuerSignatureInvalid, "\(label): algorithm \(algorithm) does not match the document signer's key")
            return
        }
        // A signer that chains to the tenant's IACA signs credentials that come
        // again and again: its signatures go through the process's memo and
        // fixed-base tables. Any other key would only take their places.
        let verified = document.signerIsTrusted
            ? TrustedSignatures.shared.isValidSignature(Array(issuerAuth.signature), for: issuerAuth.toBeSigned(), hash: algorithm.hash, key: key)
            : issuerAuth.isValidSignature(algorithm: algorithm, key: key)
        if verified {
            report.pass(name)
        } else {
            report.fail(name, .issuerSignatureInvalid, "\(label): issuerAuth signature does not verify with the document signer key")
        }
    }
}
