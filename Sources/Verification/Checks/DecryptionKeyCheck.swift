/// `decryption.key`: the response was encrypted to one of the tenant's keys
/// (Apple's pkRHash, or Annex C's recipientPublicKey). Skipped for a plain
/// DeviceResponse.
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
        case .plain:
            return
        }
        report.pass(name)
    }
}
