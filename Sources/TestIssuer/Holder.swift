import CBOR
import Crypto
import MDoc

extension TestIssuer {
    /// The holder's device: the key the MSO certifies, and the mdoc
    /// authentication it performs when presenting (ISO 18013-5 §9.1.3).
    public struct Holder: Sendable {
        public let deviceKey: PrivateKey

        /// How the device authenticates DeviceAuthentication.
        public enum Authentication: Sendable {
            /// `deviceSignature`: COSE_Sign1 with a detached payload (all Apple flows).
            case signature
            /// `deviceMac`: COSE_Mac0 under EMacKey, agreed with the reader's ephemeral key.
            case mac(readerKey: PublicKey)
        }

        public init(curve: Curve = .p256) throws {
            deviceKey = try PrivateKey.generate(curve: curve)
        }

        public init(deviceKey: PrivateKey) {
            self.deviceKey = deviceKey
        }

        /// A `Document` presenting every issued element, bound to `transcript`.
        public func present(_ issued: IssuedDocument, transcript: SessionTranscript, authentication: Authentication = .signature) throws -> CBOR {
            // Nothing is device-signed beyond the binding itself, as in Apple's responses.
            let nameSpacesBytes = CBOR.embedded(.map([])).encoded()
            let signedBytes = DeviceAuthentication.bytes(transcript: transcript, docType: issued.docType, nameSpacesBytes: nameSpacesBytes[...])
            let deviceAuth: CBOR
            switch authentication {
            case .signature:
                let signature = try COSESign1.sign(
                    payload: nil, detachedPayload: signedBytes, key: deviceKey, algorithm: .preferred(for: deviceKey.type))
                deviceAuth = ["deviceSignature": signature]
            case .mac(let readerKey):
                // ECDH is symmetric: the device's private key with the reader's
                // public key gives the secret the reader derives the other way.
                let key = try DeviceAuthentication.macKey(readerKey: deviceKey, deviceKey: readerKey, transcript: transcript)
                deviceAuth = ["deviceMac": COSEMac0.mac(payload: signedBytes, key: key)]
            }
            return [
                "docType": .text(issued.docType),
                "issuerSigned": issued.issuerSigned,
                "deviceSigned": ["nameSpaces": .preEncoded(nameSpacesBytes), "deviceAuth": deviceAuth],
            ]
        }
    }
}
