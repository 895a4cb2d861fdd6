import MDoc
import Verification

extension TestIssuer {
    /// The one defect an event is built with. Every reason code the verifier
    /// can produce on its own has at least one fault here, and each fault
    /// knows the exact reasons it must cause in each flow it applies to.
    ///
    /// `request.nonce_reused` has none: reuse is a property of two events and
    /// the worker's nonce store, not of one event, so no single fixture can
    /// produce it through `Verifier`. Build two valid events with the same
    /// nonce for the worker instead.
    public enum Fault: String, Sendable, CaseIterable {
        /// The CloudEvent has no `id` attribute.
        case missingEventID
        /// The payload field is not base64 of its flow's alphabet.
        case malformedBase64
        /// `data.tenant` names no configured tenant.
        case unknownTenant
        /// The payload is not CBOR of the expected shape (no envelope at all).
        case garbagePayload
        /// Apple: algorithm "APPLE-HPKE-v2"; web: an EncryptedResponse protocol
        /// other than "dcapi"; ISO: DeviceResponse version "2.0"; OpenID4VP:
        /// a response in the clear (dc_api), which the tenant does not accept.
        case unsupportedFormat
        /// Apple only: HPKE mode 1 (PSK) in the envelope.
        case unsupportedHPKEMode
        /// Sealed to a P-256 key the tenant does not have.
        case unknownRecipientKey
        /// The event carries another nonce than the device used. Apple checks
        /// infoHash first (transcript mismatch); Annex C can only fail the AEAD.
        case wrongNonce
        /// One bit of the HPKE ciphertext flipped.
        case flippedCiphertext
        /// A DeviceResponse without documents (the holder declined).
        case noDocuments
        /// Issued by an authority the tenant does not trust.
        case untrustedIssuer
        /// The document signer certificate expired 30 days ago.
        case expiredDocumentSigner
        /// The document signer certificate lacks the mdlDS extended key usage.
        case signerWithoutExtendedKeyUsage
        /// One bit of the issuerAuth signature flipped.
        case flippedIssuerSignature
        /// ISO 18013-5 Annex B: the document signer says C=FR under the US IACA
        /// (the document's issuing_country says FR too, so only the certificates disagree).
        case signerCountryDiffersFromIACA
        /// issuing_country says FR; the document signer (and its IACA) say US.
        case issuingCountryDiffersFromSigner
        /// issuing_jurisdiction names another state than the document signer's stateOrProvinceName.
        case issuingJurisdictionDiffersFromSigner
        /// The issuer correctly signed a payload that is not an MSO.
        case msoNotAnMSO
        /// The MSO names another docType than the document.
        case docTypeMismatch
        /// The MSO becomes valid tomorrow.
        case msoNotYetValid
        /// The MSO expired yesterday.
        case msoExpired
        /// family_name changed after the issuer signed its digest.
        case alteredElement
        /// The issuer signed `age_over_21` as the text "true" and `birth_date`
        /// as an untagged text: the digests hold, the types do not.
        case mistypedElements
        /// The device signed DeviceAuthentication over another session's transcript.
        case deviceSignedOtherTranscript
        /// The event's time is a minute older than the tenant's maxRequestAgeSeconds.
        case staleRequest
        /// iso-device-response only: a `sessionToken` Veridoc never issued
        /// (45 random bytes): the event claims a session it has no right to.
        case forgedSessionToken
        /// iso-device-response only: the device signed over an Apple in-app
        /// transcript (a response made for a merchant's app), submitted as a
        /// proximity response.
        case foreignTranscript
        /// iso-device-response only: a device MAC agreed with a reader key
        /// that is not the transcript's EReaderKey (the one supplied with it).
        case readerKeyNotInTranscript
        /// iso-device-response only: `readerAuthentication` signed by a key
        /// that is not the registered reader's (the device signs, so only the
        /// reader check fails).
        case forgedReaderSignature
        /// iso-device-response only: a device MAC and no reader signature, as
        /// anyone holding a credential's issuer-signed part can make.
        case unboundDeviceMac
        /// The event asks for an EU PID; the holder answers with its mDL.
        case unrequestedDocType
        /// openid4vp-dc-api only: the browser's promise resolved with an
        /// OpenID4VP error response (`access_denied`) instead of a presentation.
        case walletError
        /// openid4vp-dc-api only: the query asked one element and the wallet
        /// disclosed all it holds.
        case unrequestedElement
        /// openid4vp-dc-api only: the query asked every element the credential
        /// holds and one it does not, which the wallet leaves out.
        case missingElement

        /// What `alteredElement` writes into family_name after signing; distinctive,
        /// so tests can assert that it never reaches an outcome.
        public static let alteredFamilyName = "Altered-After-Signing-Mallory"

        /// The exact reasons a verifier reports for this fault in `flow`, or nil
        /// when the fault does not exist in that flow (nothing is encrypted in
        /// iso-device-response, and only Apple's envelope has an HPKE mode).
        public func expectedReasons(for flow: Flow) -> [ReasonCode]? {
            switch self {
            case .missingEventID: [.eventInvalid]
            // OpenID4VP's response is a JWE string or an object, read at the payload stage.
            case .malformedBase64: flow == .openID4VPDCAPI ? nil : [.eventInvalid]
            case .unknownTenant: [.eventUnknownTenant]
            case .garbagePayload: [.payloadMalformed]
            case .unsupportedFormat: [.payloadUnsupported]
            case .unsupportedHPKEMode: flow == .appleWalletApp ? [.payloadUnsupported] : nil
            case .unknownRecipientKey: flow == .isoDeviceResponse ? nil : [.decryptionUnknownKey]
            case .wrongNonce:
                switch flow {
                case .appleWalletApp: [.decryptionTranscriptMismatch]
                case .appleWalletWeb: [.decryptionFailed]
                case .isoDeviceResponse: nil
                // ECDH-ES binds no nonce: only the device's signature over the transcript names it.
                case .openID4VPDCAPI: [.deviceSignatureInvalid]
                }
            case .flippedCiphertext: flow == .isoDeviceResponse ? nil : [.decryptionFailed]
            case .noDocuments: [.responseNoDocuments]
            case .untrustedIssuer: [.issuerUntrusted]
            case .expiredDocumentSigner, .signerWithoutExtendedKeyUsage: [.issuerCertificateInvalid]
            case .flippedIssuerSignature: [.issuerSignatureInvalid]
            case .signerCountryDiffersFromIACA: [.issuerSignerCountryMismatch]
            case .issuingCountryDiffersFromSigner: [.issuerIssuingCountryMismatch]
            case .issuingJurisdictionDiffersFromSigner: [.issuerIssuingJurisdictionMismatch]
            case .msoNotAnMSO: [.msoMalformed]
            case .docTypeMismatch: [.msoDoctypeMismatch]
            case .msoNotYetValid: [.msoNotYetValid]
            case .msoExpired: [.msoExpired]
            case .alteredElement: [.msoDigestMismatch]
            case .mistypedElements: [.msoElementTypeMismatch]
            case .deviceSignedOtherTranscript: [.deviceSignatureInvalid]
            case .staleRequest: [.requestExpired]
            case .forgedSessionToken: flow == .isoDeviceResponse ? [.requestNonceUnknown] : nil
            case .foreignTranscript: flow == .isoDeviceResponse ? [.transcriptFlowMismatch] : nil
            case .readerKeyNotInTranscript: flow == .isoDeviceResponse ? [.readerKeyMismatch] : nil
            case .forgedReaderSignature: flow == .isoDeviceResponse ? [.readerUnauthenticated] : nil
            case .unboundDeviceMac: flow == .isoDeviceResponse ? [.deviceMacUnbound] : nil
            case .unrequestedDocType: [.responseDoctypeNotRequested]
            case .walletError: flow == .openID4VPDCAPI ? [.responseWalletError] : nil
            case .unrequestedElement: flow == .openID4VPDCAPI ? [.responseElementNotRequested] : nil
            case .missingElement: flow == .openID4VPDCAPI ? [.responseElementMissing] : nil
            }
        }

        /// The flows this fault can be built for.
        public var flows: [Flow] {
            Flow.allCases.filter { expectedReasons(for: $0) != nil }
        }
    }
}
