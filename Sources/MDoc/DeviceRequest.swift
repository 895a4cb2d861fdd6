import CBOR

/// ISO/IEC 18013-5 §8.3.2.1.2.1 `DeviceRequest` with one `DocRequest` and no
/// reader authentication, as the Digital Credentials API's `org-iso-mdoc`
/// protocol carries it (ISO/IEC 18013-7 Annex C):
///
///     DeviceRequest = {"version": "1.0", "docRequests": [{"itemsRequest": #6.24(bstr .cbor ItemsRequest)}]}
///     ItemsRequest  = {"docType": tstr, "nameSpaces": {+ tstr => {+ tstr => IntentToRetain (bool)}}}
public enum DeviceRequest {
    /// One requested element and whether the reader intends to retain it.
    public struct Item: Sendable, Equatable {
        public let namespace: String
        public let element: String
        public let intentToRetain: Bool

        public init(namespace: String, element: String, intentToRetain: Bool) {
            self.namespace = namespace
            self.element = element
            self.intentToRetain = intentToRetain
        }
    }

    /// The encoded DeviceRequest: namespaces in the order they first appear,
    /// elements in the order given (a repeated element keeps its first intent).
    public static func encode(docType: String, items: [Item]) -> [UInt8] {
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
        let itemsRequest: CBOR = ["docType": .text(docType), "nameSpaces": nameSpaces]
        let request: CBOR = ["version": "1.0", "docRequests": [["itemsRequest": .embedded(itemsRequest)]]]
        return request.encoded()
    }
}
