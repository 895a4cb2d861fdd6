import Foundation
import JSON
import Settings

/// The ways a response reaches Veridoc.
public enum Flow: String, Sendable, CaseIterable {
    case appleWalletApp = "apple-wallet-app"
    case appleWalletWeb = "apple-wallet-web"
    case isoDeviceResponse = "iso-device-response"
    /// OpenID4VP 1.0 over the Digital Credentials API (Chrome and Android wallets).
    case openID4VPDCAPI = "openid4vp-dc-api"
}

/// How long a relying party says it will keep an element (PassKit
/// `PKIdentityIntentToStore`, ISO 18013-5 `IntentToRetain`).
public enum Retention: Sendable, Hashable {
    case willNotStore
    /// nil days: no stated limit.
    case mayStore(days: Int?)

    /// The most days a request or a tenant's configuration may state (about
    /// 2,700 years). The store keeps the day count as a 32-bit integer and
    /// the expiry as a timestamp before year 10000; longer is what
    /// `mayStore` without days already says.
    /// One limit for events and the config file.
    public static let maximumDays = TenantSettings.maxRetentionDaysLimit
}

extension Retention {
    /// `{"intent": "willNotStore"}`, `{"intent": "mayStore", "days": N}` or
    /// `{"intent": "mayStore"}`: as events, outcomes and sessions write it.
    public var jsonValue: JSONValue {
        switch self {
        case .willNotStore: ["intent": "willNotStore"]
        case .mayStore(let days?): ["intent": "mayStore", "days": .integer(days)]
        case .mayStore(nil): ["intent": "mayStore"]
        }
    }
}

public struct RequestedElement: Sendable, Equatable {
    public let namespace: String
    public let element: String
    public let retention: Retention

    public init(namespace: String, element: String, retention: Retention) {
        self.namespace = namespace
        self.element = element
        self.retention = retention
    }
}

/// A parsed `veridoc.verification.requested.v1` CloudEvent.
public struct VerificationRequest: Sendable {
    public static let eventType = "veridoc.verification.requested.v1"
    /// Bytes of UTF-8 a tenant name may have, as an event id may: both are
    /// indexed keys, and PostgreSQL refuses index entries past ~2.7 KB.
    /// One limit for events and the config file.
    public static let maxTenantLength = TenantSettings.maxIDLength
    /// The most docTypes one request may offer as alternatives (Wallet's any-of
    /// requests name a handful), and the longest docType, as for identifiers.
    public static let maxRequestedDocTypes = 16
    public static let maxDocTypeLength = 256

    public let id: String
    public let source: String
    /// When the request (and its nonce) was issued.
    public let time: Date
    public let tenant: String
    public let input: Input
    public let requestedElements: [RequestedElement]
    /// iso-device-response only: the token `veridoc serve` issued for the
    /// session (an `IssuedNonce`), since that flow's transcript carries no
    /// nonce of the server's. The other flows' issued tokens are their nonces.
    public let sessionToken: [UInt8]?
    /// iso-device-response only: the reader's signature over the submission,
    /// which a device MAC needs to count (`ReaderAttestation`).
    public let readerAuthentication: ReaderAttestation?
    /// The docTypes the request asked for, any one of which may answer it
    /// (PassKit's `PKIdentityAnyOfDescriptor`, a session's `docType`); empty
    /// when the event states none, and then any docType may answer.
    public let requestedDocTypes: [String]
    /// `age(atLeast:)` questions the outcome answers (`AgeAnswer`).
    public let ageRequests: [AgeRequest]

    public enum Input: Sendable {
        /// PassKit in-app: the encrypted envelope, the exact nonce bytes and
        /// their base64 text (kept only for the transcript-mismatch diagnostic).
        case appleWalletApp(payload: [UInt8], nonce: [UInt8], nonceText: String, merchantID: String)
        /// Digital Credentials API (ISO 18013-7 Annex C): `encryptionInfo` is
        /// kept as the exact string the server sent, because the transcript hashes it.
        case appleWalletWeb(response: [UInt8], encryptionInfo: String, encryptionInfoBytes: [UInt8], origin: String)
        case isoDeviceResponse(payload: [UInt8], sessionTranscript: [UInt8], ephemeralReaderKey: [UInt8]?)
        /// OpenID4VP over the Digital Credentials API: the origin the browser
        /// reported, the request's nonce as the text it sent, and what the
        /// browser's promise resolved with. The transcript hashes both strings.
        /// `credentialQueryID`, when the event names it, is the DCQL
        /// credential id the vp_token must answer.
        case openID4VPDCAPI(origin: String, nonce: String, response: OpenID4VPResponse, credentialQueryID: String?)
    }

    /// The DCQL credential query id the event names (openid4vp-dc-api).
    public var credentialQueryID: String? {
        guard case .openID4VPDCAPI(_, _, _, let id) = input else { return nil }
        return id
    }

    public var flow: Flow {
        switch input {
        case .appleWalletApp: .appleWalletApp
        case .appleWalletWeb: .appleWalletWeb
        case .isoDeviceResponse: .isoDeviceResponse
        case .openID4VPDCAPI: .openID4VPDCAPI
        }
    }

    public init(id: String, source: String, time: Date, tenant: String, input: Input, requestedElements: [RequestedElement] = [],
                sessionToken: [UInt8]? = nil, readerAuthentication: ReaderAttestation? = nil, requestedDocTypes: [String] = [],
                ageRequests: [AgeRequest] = []) {
        self.requestedDocTypes = requestedDocTypes
        self.ageRequests = ageRequests
        self.sessionToken = sessionToken
        self.readerAuthentication = readerAuthentication
        self.id = id
        self.source = source
        self.time = time
        self.tenant = tenant
        self.input = input
        self.requestedElements = requestedElements
    }
}
