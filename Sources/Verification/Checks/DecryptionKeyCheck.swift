import JSON

/// `decryption.key`: the response was encrypted to one of the tenant's keys
/// (Apple's pkRHash, or Annex C's recipientPublicKey), or, for OpenID4VP,
/// to the key the JWE's `kid` names: the session's own key, derived from the
/// nonce Veridoc issued (`IssuedNonce.Key.responseKey`), or one of the
/// tenant's encryption keys by its RFC 7638 thumbprint, for events an
/// integrator produces from requests of its own. Skipped for a response in
/// the clear.
enum DecryptionKeyCheck: RequestCheck {
    static let name = CheckName.decryptionKey
    static let reasons: [ReasonCode] = [.decryptionUnknownKey]
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let tenant = request.tenant, let envelope = request.envelope else { return }
        switch envelope {
        case .apple(let apple):
            guard let key = tenant.key(withHash: apple.recipientKeyHash) else {
                report.fail(name, .decryptionUnknownKey, "pkRHash names none of tenant \(tenant.id)'s \(tenant.keys.count) encryption keys")
                return
            }
            request.key = key
        case .annexC(_, let info):
            guard let point = info.recipientPublicKey.uncompressedPoint, let key = tenant.key(withPublicPoint: point) else {
                report.fail(name, .decryptionUnknownKey, "EncryptionInfo's recipientPublicKey is none of tenant \(tenant.id)'s encryption keys")
                return
            }
            request.key = key
        case .jwe(let jwe):
            guard let key = openID4VPKey(jwe.keyID, request: request, tenant: tenant) else {
                report.fail(name, .decryptionUnknownKey, jwe.keyID == nil
                            ? "the JWE names no kid, and its nonce is not one Veridoc issued for this tenant and origin"
                            : "the JWE's kid is neither this session's response key nor one of tenant \(tenant.id)'s \(tenant.keys.count) encryption keys")
                return
            }
            request.key = key
        case .plain, .vpToken:
            return
        }
        report.pass(name)
    }

    /// The session key when the nonce is Veridoc's and `kid` is its id (or
    /// absent), else the tenant key whose id `kid` is.
    private static func openID4VPKey(_ kid: String?, request: RequestUnderVerification, tenant: Tenant) -> TenantKey? {
        guard case .openID4VPDCAPI(let origin, let nonce, _, _) = request.request.input else { return nil }
        if let nonceKey = request.issuedNonceKey, let bytes = Base64.decodeURLUnpadded(nonce),
           let issued = nonceKey.open(bytes, binding: IssuedNonce.Binding(tenant: tenant.id, flow: .openID4VPDCAPI, audience: origin)),
           let derived = nonceKey.responseKey(for: issued), let key = try? TenantKey(derived),
           kid.map({ key.keyID.utf8.elementsEqual($0.utf8) }) ?? true {
            return key
        }
        return kid.flatMap(tenant.key(withID:))
    }
}
