import CBOR
import Crypto
import MDoc

extension TestIssuer {
    /// The holder's device: the key the MSO certifies, and the mdoc
    /// authentication it performs when presenting (ISO 18013-5 §9.1.3).
    public struct Holder: Sendable {
        public let deviceKey: PrivateKey
        /// Elements the device signs itself (`DeviceNameSpaces`:
        /// namespace → identifier → value); none by default, as in Apple's responses.
        public var deviceSignedElements: [(namespace: String, identifier: String, value: CBOR)] = []

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
            var spaces: [(String, [CBOR.MapEntry])] = []
            for element in deviceSignedElements {
                let entry = CBOR.MapEntry(.text(element.identifier), element.value)
                if let index = spaces.firstIndex(where: { $0.0 == element.namespace }) {
                    spaces[index].1.append(entry)
                } else {
                    spaces.append((element.namespace, [entry]))
                }
            }
            let nameSpacesBytes = CBOR.embedded(.map(spaces.map { CBOR.MapEntry(.text($0.0), .map($0.1)) })).encoded()
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
