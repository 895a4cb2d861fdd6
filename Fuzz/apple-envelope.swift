// libFuzzer target: the APPLE-HPKE-v1 envelope parser, and the decrypted
// plaintext path (`{"identity": DeviceResponse}`) on the same bytes.
import CBOR
import MDoc

enum Target: FuzzTarget {
    static let name: StaticString = "apple-envelope"

    static func run(_ bytes: [UInt8]) {
        _ = try? AppleEnvelope(bytes: bytes[...])
        if let identity = try? AppleEnvelope.identity(inPlaintext: bytes), let response = try? DeviceResponse(identity) {
            for document in response.documents {
                if let payload = document.issuerSigned.issuerAuth.payload { _ = try? MobileSecurityObject(payload: payload) }
                _ = try? document.issuerSigned.issuerAuth.algorithm(context: "fuzz")
                _ = try? document.issuerSigned.issuerAuth.x5chain(context: "fuzz")
            }
        }
    }
}
