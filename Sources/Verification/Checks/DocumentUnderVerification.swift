import CBOR
import Crypto
import DocumentTypes
import Foundation
import MDoc
import Settings

/// Everything a document is checked against.
public struct DocumentVerificationContext: Sendable {
    public var transcript: SessionTranscript
    public var trustStore: TrustStore
    public var time: Date
    /// The reader's ephemeral private key, needed only for a `deviceMac`.
    public var readerKey: PrivateKey?
    /// For the document's nested decodes (MSO, attached payloads): the event's budget.
    public var limits: CBORDecoder.Limits
    /// The registered reader that signed the submission (`ReaderAttestation`):
    /// what a device MAC needs to prove the holder's device to anyone but the submitter.
    public var authenticatedReader: String?
    /// What the trust store's anchors may vouch for (VICAL docTypes and freshness).
    public var anchorScopes: AnchorScopes
    /// A production tenant: Apple's test issuer on a path is refused, however it got into the trust store.
    public var refusesTestIssuers: Bool
    /// The tenant's revocation policy (`DocumentStatusCheck`).
    public var statusPolicy = TenantSettings.StatusPolicy()

    public init(transcript: SessionTranscript, trustStore: TrustStore, time: Date, readerKey: PrivateKey? = nil, limits: CBORDecoder.Limits = .default,
                authenticatedReader: String? = nil, anchorScopes: AnchorScopes = .none, refusesTestIssuers: Bool = true,
                statusPolicy: TenantSettings.StatusPolicy = .init()) {
        self.statusPolicy = statusPolicy
        self.authenticatedReader = authenticatedReader
        self.transcript = transcript
        self.anchorScopes = anchorScopes
        self.refusesTestIssuers = refusesTestIssuers
        self.trustStore = trustStore
        self.time = time
        self.readerKey = readerKey
        self.limits = limits
    }
}

/// What the document checks (ISO/IEC 18013-5 §9.3.1) know of one document so
/// far. The MSO is parsed first because several checks need its dates and
/// keys; its own check reports how that went, in its place in the order.
struct DocumentUnderVerification {
    let document: Document
    /// The document's place in the response.
    let index: Int
    /// "document N", for details.
    let label: String
    let context: DocumentVerificationContext
    let mso: Result<MobileSecurityObject, MDocError>
    var parsedMSO: MobileSecurityObject? { try? mso.get() }
    /// The document signer, set by the chain check.
    var signer: Certificate?
    /// Whether the signer chains to one of the tenant's trust anchors (the chain check passed).
    var signerIsTrusted = false
    /// The validated path, signer … anchor, when the chain check passed.
    var path: [Certificate] = []
    var summary: DocumentSummary
    /// What the status service is to resolve, set by `DocumentStatusCheck` when the MSO names a list.
    var statusQuery: StatusQuery?
    /// The catalogue's entry for each issuer-signed item, namespace by
    /// namespace in the document's order (nil: untyped): looked up once for
    /// the type check (`MSOElementTypesCheck`) and the summary's `isTyped`.
    let catalogued: [[DocumentType.Element?]]

    init(_ document: Document, index: Int, context: DocumentVerificationContext) {
        self.document = document
        self.index = index
        self.label = "document \(index)"
        self.context = context
        self.summary = DocumentSummary(docType: document.docType, elements: [])
        let type = DocumentCatalogue.shared.documentType(document.docType)
        catalogued = document.issuerSigned.nameSpaces.map { space in
            let namespace = type?.namespace(space.name)
            return space.items.map { namespace?.element($0.elementIdentifier) }
        }
        mso = {
            guard let payload = document.issuerSigned.issuerAuth.payload else { return .failure(.malformed("issuerAuth has no payload")) }
            return Result { () throws(MDocError) in try MobileSecurityObject(payload: payload, limits: context.limits) }
        }()
    }

    /// The summary with the disclosed elements, once every check ran.
    func finishedSummary() -> DocumentSummary {
        var summary = summary
        summary.elements = zip(document.issuerSigned.nameSpaces, catalogued).flatMap { space, entries in
            zip(space.items, entries).map { item, entry in
                DisclosedElement(namespace: space.name, identifier: item.elementIdentifier, value: item.elementValue, isTyped: entry != nil)
            }
        }
        summary.deviceSignedElements = (document.deviceSigned?.nameSpaces ?? []).flatMap { space in
            space.elements.map { DisclosedElement(namespace: space.name, identifier: $0) }
        }
        return summary
    }
}
