import Crypto
import Foundation
import MDoc
import Revocation
import Settings
import StatusFetch
import TestIssuer
import TestSupport
import Verification

/// A test issuer whose documents name lists on a `ListServer`, a tenant with
/// a chosen status policy, and a status service that may reach loopback
/// (`allowInsecure`), as the deployment setting of tests allows.
struct RevocationScenario {
    /// 2025-06-15T14:13:20Z: documents, lists and certificates are laid out around it.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    var factory: TestIssuer.EventFactory
    let server: ListServer
    let signer: TestIssuer.ListSigner

    init(seed: UInt64, server: ListServer) throws {
        factory = try TestIssuer.EventFactory(now: Self.now, seed: seed)
        self.server = server
        signer = try factory.authority.issuingListSigner(now: Self.now)
    }

    func verifier(_ policy: TenantSettings.StatusPolicy = .init()) throws -> Verifier {
        Verifier(directory: TenantDirectory([try factory.merchant.tenant(trusting: [factory.authority.iaca], statusPolicy: policy)]))
    }

    static func service(allowInsecure: Bool = true, maxWait: Double = 60, configure: (inout StatusService.Configuration) -> Void = { _ in }) -> StatusService {
        var configuration = StatusService.Configuration(fetch: FetchPolicy(allowInsecure: allowInsecure, connectTimeout: 30, totalTimeout: maxWait))
        configure(&configuration)
        return StatusService(configuration: configuration)
    }

    /// A list token of `kind` for `path`, signed by the scenario's list signer unless told otherwise.
    func token(_ content: TestIssuer.ListPublisher.Content, kind: TestIssuer.ListPublisher.Kind = .statusList, path: String,
               signer: TestIssuer.ListSigner? = nil, edit: (inout TestIssuer.ListPublisher) -> Void = { _ in }) throws -> [UInt8] {
        let issued = Int64(Self.now.timeIntervalSince1970)
        var publisher = TestIssuer.ListPublisher(kind: kind, content: content, subject: server.url(path), issuedAt: issued - 60, expiresAt: issued + 86_400)
        edit(&publisher)
        let signer = signer ?? self.signer
        return try publisher.signed(by: signer.key, chain: [signer.certificate])
    }

    func publish(_ content: TestIssuer.ListPublisher.Content, kind: TestIssuer.ListPublisher.Kind = .statusList, at path: String,
                 signer: TestIssuer.ListSigner? = nil, edit: (inout TestIssuer.ListPublisher) -> Void = { _ in }) throws {
        server.publish(path, try token(content, kind: kind, path: path, signer: signer, edit: edit), mediaType: kind.mediaType)
    }

    /// An iso-device-response event whose MSO names `status`.
    mutating func event(_ status: MSOStatus?, flow: Flow = .isoDeviceResponse, fault: TestIssuer.Fault? = nil) throws -> TestIssuer.GeneratedEvent {
        var options = TestIssuer.EventOptions()
        options.status = status
        return try factory.event(flow, options: options, fault: fault)
    }

    /// The event verified and its status resolved, as the worker and `veridoc verify` do.
    static func verify(_ event: TestIssuer.GeneratedEvent, with verifier: Verifier, service: StatusService) -> VerificationResult {
        verifier.verify(eventJSON: event.json(), at: now).resolvingStatus { service.resolve($0, at: now) }
    }

    static func statusListReference(_ index: UInt64, _ uri: String, certificate: [UInt8]? = nil) -> MSOStatus {
        MSOStatus(statusList: .init(index: index, uri: uri, certificate: certificate))
    }

    static func identifierListReference(_ id: [UInt8], _ uri: String) -> MSOStatus {
        MSOStatus(identifierList: .init(id: id, uri: uri))
    }
}

extension VerificationResult {
    var codes: [ReasonCode] { report.reasons.map(\.code) }
    var documentStatus: CredentialStatus? { documents.first?.status }
    /// The `status.undetermined` detail, if any.
    var undeterminedDetail: String? { report.reasons.first { $0.code == .statusUndetermined }?.detail }
}

/// A list server and a status service that may reach it, for one test;
/// both stopped when the test's suite value goes.
final class ServedLists: Sendable {
    let server: ListServer
    let service: StatusService

    init() throws {
        server = try ListServer()
        service = RevocationScenario.service()
    }

    deinit {
        service.stop()
        server.stop()
    }
}
