import Crypto
import Foundation
import MDoc
import StatusList
import TestIssuer
import TestSupport
import Testing

/// The shared status-list vectors, read in place from `shared/vectors/status-list`.
enum ListVectors {
    static let folder = "status-list"

    static var available: Bool {
        guard let url = try? Vectors.url(folder) else { return false }
        return FileManager.default.fileExists(atPath: url.path)
    }

    static let missing = "shared/vectors/status-list not found: set VERIDOC_VECTORS or place shared/vectors next to the package"

    static func hex(_ path: String) throws -> [UInt8] { try Vectors.hex("\(folder)/\(path)") }
    static func text(_ path: String) throws -> String { try Vectors.text("\(folder)/\(path)") }
    static func bytes(_ path: String) throws -> [UInt8] { try Vectors.bytes("\(folder)/\(path)") }
    static func object(_ path: String) throws -> [String: Any] { try Vectors.jsonObject("\(folder)/\(path)") }
    static func certificate(_ path: String) throws -> Certificate {
        try #require(try Certificate.parsePEM(text(path)).first)
    }

    static func date(_ seconds: Any?) throws -> Date {
        Date(timeIntervalSince1970: TimeInterval(try #require(seconds as? Int)))
    }
}

/// An issuing authority of the test issuer with a list signer, and tokens
/// published at one URI around one moment.
struct ListWorld {
    static let uri = "https://lists.example/revocation/7"

    /// Whole seconds: claims carry no fraction.
    let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    let authority: TestIssuer.Authority
    let listSigner: TestIssuer.ListSigner

    init() throws {
        authority = try TestIssuer.Authority(now: now)
        listSigner = try authority.issuingListSigner(now: now)
    }

    var seconds: Int64 { Int64(now.timeIntervalSince1970) }

    /// Issued a minute ago, expiring in a day, at `uri`.
    func publisher(_ kind: TestIssuer.ListPublisher.Kind, _ content: TestIssuer.ListPublisher.Content) -> TestIssuer.ListPublisher {
        TestIssuer.ListPublisher(kind: kind, content: content, subject: Self.uri, issuedAt: seconds - 60, expiresAt: seconds + 86_400)
    }

    /// Signed by the list signer, which the x5chain names.
    func token(_ publisher: TestIssuer.ListPublisher) throws -> [UInt8] {
        try publisher.signed(by: listSigner.key, chain: [listSigner.certificate])
    }

    func authorize(_ token: ListToken, reference: [UInt8]? = nil) -> Result<Certificate, StatusListError> {
        ListSignerRule.authorize(token: token, referenceCertificate: reference, documentSigner: authority.documentSigner,
                                 issuingAnchor: authority.iaca, at: now)
    }
}

/// The error `body` throws, for `#expect` on its step.
func listError(_ body: () throws(StatusListError) -> Void) -> StatusListError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

extension Result where Failure == StatusListError {
    var failure: StatusListError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
