// libFuzzer target: ISO 18013-7 Annex C EncryptedResponse and EncryptionInfo,
// and the bare DeviceResponse (the Annex C plaintext) down to each document's MSO.
import CBOR
import MDoc

enum Target: FuzzTarget {
    static let name: StaticString = "annex-c"

    static func run(_ bytes: [UInt8]) {
        _ = try? AnnexCEncryptedResponse(bytes: bytes[...])
        _ = try? AnnexCEncryptionInfo(bytes: bytes[...])
        _ = try? SessionTranscript(received: bytes)
        if let response = try? DeviceResponse(bytes: bytes[...]) {
            for document in response.documents {
                let auth = document.issuerSigned.issuerAuth
                if let payload = auth.payload { _ = try? MobileSecurityObject(payload: payload) }
                _ = try? auth.algorithm(context: "fuzz")
                _ = try? auth.x5chain(context: "fuzz")
                _ = auth.toBeSigned()
            }
        }
    }
}
