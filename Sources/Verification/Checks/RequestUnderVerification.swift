import CBOR
import Crypto
import Foundation
import JOSE
import MDoc

/// What the request checks know of one request so far: each check reads what
/// the earlier ones found and adds its own. A check whose input is missing
/// (an earlier check failed, or its flow has no such step) records nothing,
/// so it is reported as skipped.
struct RequestUnderVerification {
    let request: VerificationRequest
    let time: Date
    let allowedClockSkew: TimeInterval
    /// The tenant the request names, when it is configured (the age check reads its limit).
    let configuredTenant: Tenant?
    /// One budget for every CBOR decode of this event, however deeply its structures nest.
    let limits: CBORDecoder.Limits
    /// What checks issued nonces; nil where no replay key is configured (`veridoc verify` without one).
    let issuedNonceKey: IssuedNonce.Key?

    /// Set by the tenant check once the request may speak for the tenant.
    var tenant: Tenant?
    /// Set by the payload check.
    var envelope: Envelope?
    /// Set by the key check.
    var key: TenantKey?
    /// Set by the payload check (iso-device-response) or the transcript check.
    var transcript: SessionTranscript?
    var readerKey: PrivateKey?
    /// Set by the transcript check (iso-device-response).
    var transcriptForm: TranscriptForm?
    /// The transcript's canonical encoding (`CanonicalCBOR`), set by the
    /// transcript check; the flows that build their transcript use its bytes.
    var canonicalTranscript: [UInt8]?
    /// The reader the reader check authenticated, by its registered id.
    var authenticatedReader: String?
    /// The device keys of the documents whose MSO parsed, in document order.
    var deviceKeys: [PublicKey] = []

    /// The presentation's single-use identities: one per document's device
    /// key, over the transcript's canonical encoding (`PresentationIdentity`).
    var presentationTokens: [[UInt8]] {
        guard let transcript else { return [] }
        let canonical: [UInt8]
        switch request.input {
        case .isoDeviceResponse:
            guard let canonicalTranscript else { return [] }
            canonical = canonicalTranscript
        case .appleWalletApp, .appleWalletWeb, .openID4VPDCAPI:
            canonical = transcript.encoded
        }
        return deviceKeys.map { PresentationIdentity.token(deviceKey: $0, canonicalTranscript: canonical) }
    }
    /// Set by the decryption check.
    var plaintext: [UInt8]?
    /// Set by the response check.
    var response: DeviceResponse?
    var documents: [DocumentSummary] = []
    /// For a request with `ageAtLeast`: each document's issuer-signed
    /// elements that can answer an age, kept before data minimisation
    /// removes what the element list did not ask for.
    var ageEvidence: [DocumentSummary] = []
    /// openid4vp-dc-api: each document's returned element names, issuer- and
    /// device-signed, before data minimisation (`ResponseQueryCheck`).
    var returnedElements: [(issuerSigned: [DisclosedElement], deviceSigned: [DisclosedElement])] = []
    /// The documents whose lists the status service is to read (`DocumentStatusCheck`).
    var statusQueries: [StatusQuery] = []
    /// The value whose single use the pipeline enforces (`VerificationResult.replayToken`).
    var replayToken: [UInt8]?
    /// Set by the issued-nonce check when the nonce is one Veridoc issued.
    var issuedNonce: IssuedNonce?
    /// A test tenant's response, classified when its documents are verified.
    var testKind: TestKind?

    /// Production, or test for every request naming a test tenant, whatever became of it.
    var assurance: Assurance {
        configuredTenant?.testConditions == nil ? .production : .test(kind: testKind)
    }

    /// A flow's payload, parsed.
    enum Envelope {
        case apple(AppleEnvelope)
        case annexC(AnnexCEncryptedResponse, AnnexCEncryptionInfo)
        case plain(CBORItem)
        /// OpenID4VP `dc_api.jwt`: the JWE, read but not yet decrypted.
        case jwe(CompactJWE)
        /// OpenID4VP `dc_api`: the DeviceResponse bytes from the clear vp_token.
        case vpToken([UInt8])
    }

    init(request: VerificationRequest, directory: TenantDirectory, time: Date, allowedClockSkew: TimeInterval, limits: CBORDecoder.Limits,
         issuedNonceKey: IssuedNonce.Key? = nil) {
        self.request = request
        self.issuedNonceKey = issuedNonceKey
        self.time = time
        self.allowedClockSkew = allowedClockSkew
        self.configuredTenant = directory[request.tenant]
        self.limits = limits.budgeted()
    }

    /// Runs `checks` on each document of the response, each document's in turn.
    mutating func verifyDocuments(with checks: [any DocumentCheck.Type], into report: inout CheckReport) {
        guard let response, let tenant, let transcript else { return }
        let context = DocumentVerificationContext(
            transcript: transcript, trustStore: tenant.trustStore, time: time, readerKey: readerKey, limits: limits,
            authenticatedReader: authenticatedReader, anchorScopes: tenant.anchorScopes, refusesTestIssuers: tenant.testConditions == nil,
            statusPolicy: tenant.statusPolicy)
        let shapes = testShapes(of: response, tenant: tenant)
        // Data minimisation: with a request stated, what was not asked for is
        // neither stored nor put in the outcome (it is still digest-checked).
        let requested = request.requestedElements.isEmpty ? nil : RequestedElementIndex(request.requestedElements)
        documents = response.documents.enumerated().map { index, document in
            var underVerification = DocumentUnderVerification(document, index: index, context: context)
            let notApplicable = shapes?[index].notApplicable ?? []
            for check in checks {
                if notApplicable.contains(check.name) {
                    report.markNotApplicable(check.name)
                } else {
                    check.run(&underVerification, into: &report)
                }
            }
            if let key = underVerification.parsedMSO?.deviceKey { deviceKeys.append(key) }
            if let query = underVerification.statusQuery { statusQueries.append(query) }
            var summary = underVerification.finishedSummary()
            if case .openID4VPDCAPI = request.input {
                returnedElements.append((summary.elements.map { DisclosedElement(namespace: $0.namespace, identifier: $0.identifier) },
                                         summary.deviceSignedElements))
            }
            if !request.ageRequests.isEmpty {
                // An age check is answered from the elements the wallet returned for
                // it (age_over_NN, or age_in_years in Apple's fallback), which the
                // request's element list need not name: read before minimisation.
                var evidence = summary
                evidence.elements = summary.elements.filter { AgeAnswer.mayAnswer($0.identifier) }
                ageEvidence.append(evidence)
            }
            if let requested {
                summary.elements.removeAll { requested[namespace: $0.namespace, element: $0.identifier] == nil }
            }
            return summary
        }
    }

    /// Each document's test shape, for a test tenant whose response is of one
    /// kind throughout (sets `testKind`); nil otherwise, when every check runs.
    private mutating func testShapes(of response: DeviceResponse, tenant: Tenant) -> [TestShape]? {
        guard let conditions = tenant.testConditions else { return nil }
        let shapes = response.documents.compactMap { TestShape.classify($0, flow: request.flow, teamID: tenant.teamID, conditions: conditions) }
        guard shapes.count == response.documents.count, let kind = shapes.first?.kind, shapes.allSatisfy({ $0.kind == kind }) else { return nil }
        testKind = kind
        return shapes
    }

    /// The reason for a payload or plaintext that does not parse.
    static func payloadReason(_ error: any Error, _ what: String) -> Reason {
        switch error {
        case let error as MDocError:
            Reason(error.isUnsupported ? .payloadUnsupported : .payloadMalformed, "\(what): \(error.detail)")
        case let error as CBORError:
            Reason(.payloadMalformed, "\(what): \(describe(error))")
        case JOSEError.unsupported(let detail):
            Reason(.payloadUnsupported, "\(what): \(detail)")
        case let error as JOSEError:
            Reason(.payloadMalformed, "\(what): \(error.detail)")
        default:
            Reason(.payloadMalformed, "\(what) is malformed")
        }
    }
}
