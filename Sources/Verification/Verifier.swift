import CBOR
import Crypto
import Foundation
import MDoc

/// Verifies one request end to end — event, payload, decryption, response,
/// each document, request age — as an ordered list of named checks. The same
/// code path serves `veridoc verify` and the worker; only the nonce store is
/// the worker's.
public struct Verifier: Sendable {
    public let directory: TenantDirectory
    public var eventParser: EventParser
    /// Limits for CBOR from strangers (envelopes, plaintexts, responses);
    /// `maxItems` is also what all decodes of one event may take together.
    public var cborLimits: CBORDecoder.Limits
    /// How far in the future an event's `time` may lie (clock skew between producer and worker).
    public var allowedClockSkew: TimeInterval = 300

    /// What all CBOR decodes of one event may take together: 25,000 items is
    /// some eighty times what a mobile document with every mDL element holds
    /// (Apple's sample: about 300), and keeps the worst event within a few
    /// times a valid one of its size.
    public static let eventCBORLimits = CBORDecoder.Limits(maxItems: 25_000)

    public init(directory: TenantDirectory, eventParser: EventParser = EventParser(), cborLimits: CBORDecoder.Limits = Verifier.eventCBORLimits) {
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
        var report = CheckReport()
        report.fail(.eventStructure, .eventInvalid, rejection.detail)
        return VerificationResult(
            requestID: rejection.id, tenant: rejection.tenant, flow: rejection.flow, verifiedAt: time, eventTime: nil, report: report,
            documents: [], requestedElements: [], replayToken: nil)
    }

    public func verify(_ request: VerificationRequest, at time: Date) -> VerificationResult {
        var report = CheckReport()
        report.pass(.eventStructure)
        var documents: [DocumentSummary] = []
        var replayToken: [UInt8]?

        if let tenant = directory[request.tenant] {
            if let problem = attributionProblem(request, tenant) {
                report.fail(.eventTenant, .eventUnknownTenant, problem)
            } else {
                report.pass(.eventTenant)
                // One budget for every CBOR decode of this event, however deeply its structures nest.
                var session = Session(request: request, tenant: tenant, time: time, limits: cborLimits.budgeted())
                if let response = session.openResponse(into: &report) {
                    documents = verifyDocuments(response, session: session, into: &report)
                }
                replayToken = session.replayToken
            }
        } else {
            report.fail(.eventTenant, .eventUnknownTenant, "tenant \(request.tenant) is not configured")
        }
        checkAge(request, tenant: directory[request.tenant], at: time, into: &report)

        return VerificationResult(
            requestID: request.id, tenant: request.tenant, flow: request.flow, verifiedAt: time, eventTime: request.time, report: report,
            documents: documents, requestedElements: request.requestedElements, replayToken: replayToken)
    }

    /// A request may only speak for a tenant through identifiers the tenant owns.
    private func attributionProblem(_ request: VerificationRequest, _ tenant: Tenant) -> String? {
        switch request.input {
        case .appleWalletApp(_, _, _, let merchantID):
            if !tenant.owns(merchantID: merchantID) { return "merchantId is not one of tenant \(tenant.id)'s merchant IDs" }
            if tenant.teamID == nil { return "tenant \(tenant.id) has no teamId for apple-wallet-app requests" }
        case .appleWalletWeb(_, _, _, let origin):
            if !tenant.owns(origin: origin) { return "origin is not one of tenant \(tenant.id)'s origins" }
        case .isoDeviceResponse:
            break
        }
        if request.flow != .isoDeviceResponse && tenant.keys.isEmpty { return "tenant \(tenant.id) has no encryption keys" }
        return nil
    }

    private func verifyDocuments(_ response: DeviceResponse, session: Session, into report: inout CheckReport) -> [DocumentSummary] {
        // ISO 18013-5 status 10–12: the device reports an error and returns no data. Status is
        // outside every signature, so documents beside it are not trusted to be what the holder sent.
        guard response.status == 0 else {
            report.fail(.responseDocuments, .responseNoDocuments, "DeviceResponse status \(response.status) reports an error; its documents are not read")
            return []
        }
        guard !response.documents.isEmpty else {
            report.fail(.responseDocuments, .responseNoDocuments, "DeviceResponse has no documents (status \(response.status))")
            return []
        }
        report.pass(.responseDocuments)
        guard let transcript = session.transcript else { return [] }
        let context = DocumentVerificationContext(
            transcript: transcript, trustStore: session.tenant.trustStore, time: session.time, readerKey: session.readerKey, limits: session.limits)
        let verifier = DocumentVerifier()
        return response.documents.enumerated().map { index, document in
            verifier.verify(document, index: index, context: context, into: &report)
        }
    }

    private func checkAge(_ request: VerificationRequest, tenant: Tenant?, at time: Date, into report: inout CheckReport) {
        let maxAge = tenant?.maxRequestAge ?? 600
        let age = time.timeIntervalSince(request.time)
        if age > maxAge {
            report.fail(.requestAge, .requestExpired, "request issued \(Int(age)) s before verification, more than the allowed \(Int(maxAge)) s")
        } else if age < -allowedClockSkew {
            report.fail(.requestAge, .requestExpired, "request time lies \(Int(-age)) s in the future")
        } else {
            report.pass(.requestAge)
        }
    }
}
