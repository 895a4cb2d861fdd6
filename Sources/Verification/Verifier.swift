import CBOR
import Crypto
import Foundation
import MDoc

/// Verifies one request end to end — event, payload, decryption, response,
/// each document, request age — through the checks of `VerificationPolicy`,
/// in its order. The same code path serves `veridoc verify` and the worker;
/// only the nonce store is the worker's.
public struct Verifier: Sendable {
    public let directory: TenantDirectory
    public var eventParser: EventParser
    /// Limits for CBOR from strangers (envelopes, plaintexts, responses);
    /// `maxItems` is also what all decodes of one event may take together.
    public var cborLimits: CBORDecoder.Limits
    /// How far in the future an event's `time` may lie (clock skew between producer and worker).
    public var allowedClockSkew: TimeInterval = 300
    /// Checks the nonces `veridoc serve` issues; nil where no replay key is configured.
    public let issuedNonceKey: IssuedNonce.Key?

    /// What all CBOR decodes of one event may take together: 25,000 items is
    /// some eighty times what a mobile document with every mDL element holds
    /// (Apple's sample: about 300), and keeps the worst event within a few
    /// times a valid one of its size.
    public static let eventCBORLimits = CBORDecoder.Limits(maxItems: 25_000)

    public init(directory: TenantDirectory, eventParser: EventParser = EventParser(), cborLimits: CBORDecoder.Limits = Verifier.eventCBORLimits,
                issuedNonceKey: IssuedNonce.Key? = nil) {
        self.issuedNonceKey = issuedNonceKey
        self.directory = directory
        self.eventParser = eventParser
        self.cborLimits = cborLimits
    }

    public func verify(eventJSON: [UInt8], at time: Date) -> VerificationResult {
        switch eventParser.parse(json: eventJSON) {
        case .success(let request): verify(request, at: time)
        case .failure(let rejection): rejected(rejection, at: time)
        }
    }

    public func rejected(_ rejection: EventRejection, at time: Date) -> VerificationResult {
        VerificationResult(
            requestID: rejection.id, tenant: rejection.tenant, flow: rejection.flow, verifiedAt: time, eventTime: nil,
            report: EventStructureCheck.rejecting(rejection.detail), documents: [], requestedElements: [], replayToken: nil,
            assurance: rejection.tenant.flatMap { directory[$0] }?.testConditions == nil ? .production : .test(kind: nil))
    }

    /// Runs `VerificationPolicy.checks` on the request.
    public func verify(_ request: VerificationRequest, at time: Date) -> VerificationResult {
        var underVerification = RequestUnderVerification(
            request: request, directory: directory, time: time, allowedClockSkew: allowedClockSkew, limits: cborLimits,
            issuedNonceKey: issuedNonceKey)
        var report = CheckReport()
        VerificationPolicy.run(&underVerification, into: &report)
        return VerificationResult(
            requestID: request.id, tenant: request.tenant, flow: request.flow, verifiedAt: time, eventTime: request.time, report: report,
            documents: underVerification.documents, requestedElements: request.requestedElements, replayToken: underVerification.replayToken,
            sessionID: underVerification.issuedNonce?.sessionID, assurance: underVerification.assurance,
            presentationTokens: underVerification.presentationTokens, statusQueries: underVerification.statusQueries,
            // An age from a birth date at the earlier of the request's time and now: a
            // backlog or a redelivery past a birthday never turns a no into a yes.
            ageAnswers: request.ageRequests.map { AgeAnswer.evaluate(atLeast: $0.age, documents: underVerification.ageEvidence, at: min(request.time, time)) })
    }
}
