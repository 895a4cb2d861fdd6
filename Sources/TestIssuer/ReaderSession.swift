import CBOR
import Crypto
import MDoc

extension TestIssuer {
    /// A proximity (ISO 18013-5 §9.1.5.1) reader session: the reader's
    /// ephemeral key and the SessionTranscript
    /// `[DeviceEngagementBytes, EReaderKeyBytes, Handover]`, with QR handover (null).
    public struct ReaderSession: Sendable {
        public let readerKey: PrivateKey
        /// The encoded transcript, as a ProximityReader app would forward it.
        public let transcriptBytes: [UInt8]
        public let transcript: SessionTranscript

        /// A session whose transcript names one reader key while `readerKey` is another.
        public func supplying(_ other: PrivateKey) throws -> ReaderSession {
            ReaderSession(readerKey: other, transcriptBytes: transcriptBytes, transcript: transcript)
        }

        private init(readerKey: PrivateKey, transcriptBytes: [UInt8], transcript: SessionTranscript) {
            self.readerKey = readerKey
            self.transcriptBytes = transcriptBytes
            self.transcript = transcript
        }

        public init() throws {
            readerKey = try PrivateKey.generate(curve: .p256)
            let deviceEngagementKey = try PrivateKey.generate(curve: .p256)
            // DeviceEngagement = {0: version, 1: Security [cipher suite 1, EDeviceKeyBytes]}.
            let engagement: CBOR = [0: "1.0", 1: [1, .embedded(COSEKey.encode(deviceEngagementKey.publicKey))]]
            transcriptBytes = CBOR.array([.embedded(engagement), .embedded(COSEKey.encode(readerKey.publicKey)), nil]).encoded()
            transcript = try SessionTranscript(received: transcriptBytes)
        }

        /// The reader key as PKCS#8 DER, one of the forms `ephemeralReaderKey` accepts.
        public func readerKeyDER() throws -> [UInt8] {
            try PEM.der(fromPEM: try readerKey.pkcs8PEM())
        }
    }
}
