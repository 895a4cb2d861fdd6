import Crypto
import Foundation

extension TestIssuer {
    /// Every way a status list server can fail to answer for a document, as
    /// data: what the server sends for each, and the step of
    /// `status.undetermined` it must yield. One catalogue, so that the
    /// status service, `veridoc verify` and the worker are tried with the
    /// same faults. The document names index `ListFault.index` of a status
    /// list at the URI.
    public enum ListFault: String, CaseIterable, Sendable {
        case notFound, serverError, indexPastTheEnd, expiredList, futureIssuedAt, wrongSubject, wrongType, identifierListForAStatusList
        case jwtMediaType, jwtBytes, untagged, mac, anotherIACAsSigner, signerWithoutProfile, zlibBomb, oversizedBody, unknownStatusValue
        case missingExpiry

        /// The index the document's reference names.
        public static let index: UInt64 = 5

        /// The `cause` the outcome must give.
        public var step: String {
            switch self {
            case .notFound, .serverError: "http_status"
            case .indexPastTheEnd: "index"
            case .expiredList, .missingExpiry: "exp"
            case .futureIssuedAt: "iat"
            case .wrongSubject: "sub"
            case .wrongType, .identifierListForAStatusList, .jwtMediaType: "media_type"
            case .jwtBytes, .untagged: "token"
            case .mac: "mac"
            case .anotherIACAsSigner, .signerWithoutProfile: "signer"
            case .zlibBomb: "decompression"
            case .oversizedBody: "too_large"
            case .unknownStatusValue: "value"
            }
        }

        /// What a server answers at `uri`, the tokens signed by `signer`
        /// (certified by `authority`'s IACA) unless the fault is the signer;
        /// nil: nothing is served there (404).
        public func response(uri: String, authority: Authority, signer: ListSigner, now: Date) throws -> ListResponse? {
            let entries = [UInt8](repeating: 0, count: 16)
            let issued = Int64(now.timeIntervalSince1970)
            func token(_ content: ListPublisher.Content, kind: ListPublisher.Kind = .statusList, by signer: ListSigner = signer,
                       edit: (inout ListPublisher) -> Void = { _ in }) throws -> ListResponse {
                var publisher = ListPublisher(kind: kind, content: content, subject: uri, issuedAt: issued - 60, expiresAt: issued + 86_400)
                edit(&publisher)
                return ListResponse(contentType: ListPublisher.Kind.statusList.mediaType, body: try publisher.signed(by: signer.key, chain: [signer.certificate]))
            }
            switch self {
            case .notFound: return nil
            case .serverError: return ListResponse(status: 500, body: Array("oops".utf8))
            case .indexPastTheEnd: return try token(.statuses(bits: 8, [0, 0, 0, 0, 0]))
            case .expiredList: return try token(.statuses(bits: 1, entries)) { $0.issuedAt = issued - 7_200; $0.expiresAt = issued - 60 }
            case .missingExpiry: return try token(.statuses(bits: 1, entries)) { $0.expiresAt = nil }
            case .futureIssuedAt: return try token(.statuses(bits: 1, entries)) { $0.issuedAt = issued + 3_600 }
            case .wrongSubject: return try token(.statuses(bits: 1, entries)) { $0.subject = uri + "x" }
            case .wrongType: return try token(.statuses(bits: 1, entries)) { $0.type = .text("application/cwt") }
            // An identifier list where a status list was named: its typ is the other kind's.
            case .identifierListForAStatusList: return try token(.identifiers([[1]]), kind: .identifierList)
            case .jwtMediaType: return ListResponse(contentType: "application/statuslist+jwt", body: Array("eyJhbGciOiJFUzI1NiJ9.e30.c2ln".utf8))
            case .jwtBytes: return ListResponse(contentType: ListPublisher.Kind.statusList.mediaType, body: Array("eyJhbGciOiJFUzI1NiJ9.e30.c2ln".utf8))
            case .untagged: return try token(.statuses(bits: 1, entries)) { $0.tag = nil }
            case .mac: return try token(.statuses(bits: 1, entries)) { $0.tag = 17 }
            case .anotherIACAsSigner:
                let other = try Authority(now: now, name: "Other Issuer", state: "NV")
                return try token(.statuses(bits: 1, entries), by: try other.issuingListSigner(now: now))
            case .signerWithoutProfile:
                return try token(.statuses(bits: 1, entries), by: try authority.issuingListSigner(now: now, extendedKeyUsage: nil))
            case .zlibBomb: return try token(.compressedStatuses(bits: 1, lst: try Zlib.compressedZeros(count: 64 << 20)))
            case .oversizedBody: return ListResponse(contentType: ListPublisher.Kind.statusList.mediaType, body: [UInt8](repeating: 0, count: 50 << 20))
            case .unknownStatusValue:
                var values = entries
                values[Int(Self.index)] = 3
                return try token(.statuses(bits: 2, values))
            }
        }
    }

    /// One answer of a list server.
    public struct ListResponse: Sendable {
        public var status: UInt32
        public var contentType: String?
        public var body: [UInt8]

        public init(status: UInt32 = 200, contentType: String? = nil, body: [UInt8]) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }
}
