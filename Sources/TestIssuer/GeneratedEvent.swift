import Crypto
import Foundation
import MDoc
import Verification

extension TestIssuer {
    /// A built `veridoc.verification.requested.v1` event, with what went into
    /// it, so that tests can check outcomes against it and derive variants.
    public struct GeneratedEvent: Sendable {
        public let flow: Flow
        public let fault: Fault?
        /// CloudEvents context attributes (`id`, `time`, …), all strings.
        public var attributes: [String: String]
        /// `data` fields other than `requestedElements`, all strings.
        public var data: [String: String]
        public var requestedElements: [RequestedElement]
        /// `data.requestedDocTypes`; none when empty.
        public var requestedDocTypes: [String] = []
        /// `data.ageAtLeast`; none when empty.
        public var ageRequests: [AgeRequest] = []
        /// The plaintext DeviceResponse the holder produced (before any envelope).
        public let deviceResponse: [UInt8]
        /// The session transcript the verifier should rebuild for this event.
        public let transcript: SessionTranscript
        /// What `Verifier` must report: empty for a valid event.
        public let expectedReasons: [ReasonCode]
        /// iso-device-response: the reader that signs the submission
        /// (`data.readerAuthentication`), signing again whenever the payload changes.
        public var reader: ReaderSigner? = nil
        /// `data.readerAuthentication` as the reader signed it.
        public var readerAuthentication: [String: String]? = nil
        /// openid4vp-dc-api: how `data.response` wraps `data["response"]`.
        public var openID4VPForm: OpenID4VPForm = .encrypted

        /// What the browser's promise resolved with, around the text in `data["response"]`.
        public enum OpenID4VPForm: Sendable {
            /// `{"response": <compact JWE>}` (dc_api.jwt).
            case encrypted
            /// `{"vp_token": {"mdl": [<base64url DeviceResponse>]}}` (dc_api).
            case clear
            /// `{"error": <code>}`.
            case error
        }

        /// A proximity reader signing what it forwards (`ReaderAttestation`).
        public struct ReaderSigner: Sendable {
            public let id: String
            public let key: PrivateKey
            public let tenant: String
        }

        public var id: String? { attributes["id"] }

        /// The `data` field that carries the wallet's bytes in this flow.
        public var payloadField: String { flow == .appleWalletWeb || flow == .openID4VPDCAPI ? "response" : "payload" }

        /// The bytes of the payload field (envelope, EncryptedResponse or
        /// DeviceResponse; OpenID4VP's compact JWE as text).
        public var payload: [UInt8] {
            guard let text = data[payloadField] else { return [] }
            if flow == .openID4VPDCAPI { return Array(text.utf8) }
            let standard = flow == .appleWalletWeb ? Self.standardFromURL(text) : text
            return Data(base64Encoded: standard).map(Array.init) ?? []
        }

        /// The same event carrying `bytes` as its payload, in the flow's base64 alphabet.
        public func replacingPayload(_ bytes: some Collection<UInt8>) -> GeneratedEvent {
            var copy = self
            copy.data[payloadField] = switch flow {
            case .appleWalletWeb: Self.base64URL(bytes)
            case .openID4VPDCAPI: String(decoding: Array(bytes), as: UTF8.self)
            case .appleWalletApp, .isoDeviceResponse: Data(bytes).base64EncodedString()
            }
            copy.signAsReader()
            return copy
        }

        /// Signs the event's iso-device-response fields as `reader` (nothing without one),
        /// at the event's `time`.
        public mutating func signAsReader() {
            guard let reader else {
                readerAuthentication = nil
                return
            }
            func decoded(_ name: String) -> [UInt8]? { data[name].flatMap { Data(base64Encoded: $0) }.map(Array.init) }
            let signedAt = attributes["time"] ?? ""
            let bytes = ReaderAttestation.signedBytes(
                tenant: reader.tenant, readerID: reader.id, signedAtText: signedAt, response: decoded("payload") ?? [],
                transcript: decoded("sessionTranscript") ?? [], readerKey: decoded("ephemeralReaderKey"))
            let signature = (try? reader.key.signature(for: bytes, hash: .sha256)) ?? []
            readerAuthentication = ["readerId": reader.id, "signedAt": signedAt, "signature": Data(signature).base64EncodedString()]
        }

        /// Structured-mode JSON, keys sorted, so the same event is the same bytes.
        public func json() -> [UInt8] {
            var dataObject: [String: Any] = data
            func retention(_ retention: Retention) -> [String: Any] {
                switch retention {
                case .willNotStore: ["intent": "willNotStore"]
                case .mayStore(let days?): ["intent": "mayStore", "days": days]
                case .mayStore(nil): ["intent": "mayStore"]
                }
            }
            if !requestedElements.isEmpty {
                dataObject["requestedElements"] = requestedElements.map { element -> [String: Any] in
                    ["namespace": element.namespace, "element": element.element, "retention": retention(element.retention)]
                }
            }
            if !ageRequests.isEmpty {
                dataObject["ageAtLeast"] = ageRequests.map { ["age": $0.age, "retention": retention($0.retention)] as [String: Any] }
            }
            if let readerAuthentication { dataObject["readerAuthentication"] = readerAuthentication }
            if !requestedDocTypes.isEmpty { dataObject["requestedDocTypes"] = requestedDocTypes }
            if flow == .openID4VPDCAPI, let text = data["response"] {
                dataObject["response"] = switch openID4VPForm {
                case .encrypted: ["response": text]
                case .clear: ["vp_token": ["mdl": [text]]]
                case .error: ["error": text]
                }
            }
            var object: [String: Any] = attributes
            object["data"] = dataObject
            // Only strings, arrays and dictionaries go in, so serialization cannot fail.
            let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return Array(json)
        }

        public var jsonString: String { String(decoding: json(), as: UTF8.self) }

        /// RFC 4648 §5 without padding, as the Digital Credentials API sends it.
        static func base64URL(_ bytes: some Collection<UInt8>) -> String {
            String(Data(bytes).base64EncodedString().compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
        }

        static func standardFromURL(_ text: String) -> String {
            var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
            while standard.count % 4 != 0 { standard += "=" }
            return standard
        }
    }
}
