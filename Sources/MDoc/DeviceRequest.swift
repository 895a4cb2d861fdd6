import CBOR
import Crypto

/// ISO/IEC 18013-5 §8.3.2.1.2.1 `DeviceRequest` (second edition, version
/// "1.1") with one `DocRequest`, as the Digital Credentials API's
/// `org-iso-mdoc` protocol carries it (ISO/IEC 18013-7 Annex C), in the shape
/// of Apple's sample request:
///
///     DeviceRequest = {"version": "1.1", "docRequests": [{"itemsRequest": ItemsRequestBytes}],
///                      "deviceRequestInfo": #6.24(bstr .cbor {"useCases": [{"mandatory": true, "documentSets": [[0]]}]}),
///                      ? "readerAuthAll": [COSE_Sign1]}
///     ItemsRequest  = {"docType": tstr, "nameSpaces": {+ tstr => {+ tstr => IntentToRetain (bool)}}}
///
/// `readerAuthAll` (no per-document `readerAuth`, as in Apple's sample) signs
/// `ReaderAuthenticationAll` over the SessionTranscript of that very request;
/// Apple Wallet refuses a request without it.
public enum DeviceRequest {
    /// One requested element and whether the reader intends to retain it.
    public typealias Item = (namespace: String, element: String, intentToRetain: Bool)

    /// The encoded DeviceRequest: namespaces in the order they first appear,
    /// elements in the order given (a repeated element keeps its first intent);
    /// signed by `signer` over `transcript` when both are given.
    public static func encode(docType: String, items: [Item], signer: ReaderSigner? = nil, transcript: SessionTranscript? = nil) throws(CryptoError) -> [UInt8] {
        var order: [String] = []
        var elements: [String: [CBOR.MapEntry]] = [:]
        for item in items {
            if elements[item.namespace] == nil { order.append(item.namespace) }
            var entries = elements[item.namespace] ?? []
            guard !entries.contains(where: { $0.key == .text(item.element) }) else { continue }
            entries.append(CBOR.MapEntry(.text(item.element), .bool(item.intentToRetain)))
            elements[item.namespace] = entries
        }
        let nameSpaces = CBOR.map(order.map { CBOR.MapEntry(.text($0), .map(elements[$0] ?? [])) })
        let itemsRequest = CBOR.embedded(["docType": .text(docType), "nameSpaces": nameSpaces]).encoded()
        let info = CBOR.embedded(["useCases": [["mandatory": true, "documentSets": [[0]]]]]).encoded()
        var request: [CBOR.MapEntry] = [
            .init("version", "1.1"), .init("docRequests", [["itemsRequest": .preEncoded(itemsRequest)]]), .init("deviceRequestInfo", .preEncoded(info)),
        ]
        if let signer, let transcript {
            let signed = ReaderAuthenticationAll.bytes(transcript: transcript, itemsRequests: [itemsRequest], deviceRequestInfo: info)
            request.append(.init("readerAuthAll", [try signer.readerAuthAll(signed)]))
        }
        return CBOR.map(request).encoded()
    }
}
