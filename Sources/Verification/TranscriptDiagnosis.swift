import Crypto
import MDoc

/// When a device's transcript hash does not match the one the server rebuilt,
/// try the inputs people most often get wrong and name the one that explains
/// the hash. The nonce itself is never printed.
enum TranscriptDiagnosis {
    static let appleTestTeamID = "PassKit_Identity_Test_Team_ID"

    static func apple(
        infoHash: [UInt8], nonce: [UInt8], nonceText: String, merchantID: String, teamID: String, keyHash: [UInt8], tenant: Tenant
    ) -> String {
        func matches(nonce: [UInt8] = nonce, merchantID: String = merchantID, teamID: String = teamID) -> Bool {
            sha256(SessionTranscript.appleWalletApp(nonce: nonce, merchantID: merchantID, teamID: teamID, recipientKeyHash: keyHash).encoded) == infoHash
        }
        let prefix = "infoHash does not match the SessionTranscript rebuilt from the event and tenant config: "
        for other in tenant.merchantIDs.sorted() where !other.hasSameUTF8(as: merchantID) && matches(merchantID: other) {
            return prefix + "merchantId differs (the device used another of tenant \(tenant.id)'s merchant IDs)"
        }
        if teamID != appleTestTeamID && matches(teamID: appleTestTeamID) {
            return prefix + "teamId differs (the payload was made for Apple's test team, as the iOS simulator and sample do)"
        }
        if matches(nonce: Array(nonceText.utf8)) {
            return prefix + "nonce encoding differs (the app passed the nonce's base64 text as the nonce bytes)"
        }
        let hexNonce = nonce.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        if matches(nonce: Array(hexNonce.utf8)) {
            return prefix + "nonce encoding differs (the app passed the nonce as hex text)"
        }
        if sha256(Array("AppleIdentityPresentation_1.0".utf8)) == infoHash {
            return prefix + "the envelope uses a non-Apple transcript format (info \"AppleIdentityPresentation_1.0\")"
        }
        return prefix + "merchantId, teamId and key hash reproduce no match, so the nonce most likely differs (wrong, stale, or from another session)"
    }
}
