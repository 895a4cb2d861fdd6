import CBOR
import Crypto
import Foundation

/// Who signs a DeviceRequest (ISO/IEC 18013-5 §9.1.4, reader authentication):
/// the key of the reader certificate the business holds (for the web, the one
/// Apple Business issued) and the certificates, leaf first, that go in
/// `x5chain` so the wallet can show who asks.
public struct ReaderSigner: CertifiedSigner {
    public let key: PrivateKey
    /// DER, leaf first.
    public let certificates: [[UInt8]]
    /// When the chain's certificates are all valid (Apple's are
    /// short-lived); nil when one does not read.
    public let notBefore: Date?
    public let notAfter: Date?

    public init(key: PrivateKey, certificates: [[UInt8]]) {
        self.key = key
        self.certificates = certificates
        let parsed = certificates.compactMap { try? Certificate(der: $0) }
        let readable = !parsed.isEmpty && parsed.count == certificates.count
        notBefore = readable ? parsed.map(\.notBefore).max() : nil
        notAfter = readable ? parsed.map(\.notAfter).min() : nil
    }

    /// `COSE_Sign1` over `ReaderAuthenticationAllBytes`, detached: protected
    /// `{1: -7}` (ES256), unprotected `{33: x5chain}` (one bstr for a single
    /// certificate, as Apple's sample has it; an array for a chain).
    func readerAuthAll(_ signed: [UInt8]) throws(CryptoError) -> CBOR {
        let chain: CBOR = certificates.count == 1 ? .bytes(certificates[0]) : .array(certificates.map(CBOR.bytes))
        return try COSESign1.sign(payload: nil, detachedPayload: signed, key: key, algorithm: .es256,
                                  unprotected: [CBOR.MapEntry(.int(COSEHeader.x5chain), chain)])
    }
}

/// `ReaderAuthenticationAllBytes = #6.24(bstr .cbor ["ReaderAuthenticationAll",
/// SessionTranscript, [+ ItemsRequestBytes], DeviceRequestInfoBytes / null])`
/// (ISO/IEC 18013-5 second edition): what `readerAuthAll` signs, binding the
/// request's items and use cases to one session. The transcript and the
/// tagged items are embedded as the exact bytes the request carries.
public enum ReaderAuthenticationAll {
    public static func bytes(transcript: SessionTranscript, itemsRequests: [[UInt8]], deviceRequestInfo: [UInt8]?) -> [UInt8] {
        var content: [UInt8] = []
        CBOR.appendHead(major: 4, 4, to: &content)
        CBOR.text("ReaderAuthenticationAll").encode(into: &content)
        content.append(contentsOf: transcript.encoded)
        CBOR.appendHead(major: 4, UInt64(itemsRequests.count), to: &content)
        for items in itemsRequests { content.append(contentsOf: items) }
        if let deviceRequestInfo { content.append(contentsOf: deviceRequestInfo) } else { CBOR.null.encode(into: &content) }
        var tagged: [UInt8] = []
        CBOR.appendHead(major: 6, 24, to: &tagged)
        CBOR.appendHead(major: 2, UInt64(content.count), to: &tagged)
        tagged.append(contentsOf: content)
        return tagged
    }
}
