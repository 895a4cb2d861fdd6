import Crypto
import Foundation
import MDoc

/// An IACA a tenant trusts through a trust list (VICAL), with what the list
/// says of it.
public struct ListedAnchor: Sendable {
    public let certificate: Certificate
    /// The docTypes the list makes it a trust point for; nil: every docType.
    public let docTypes: [String]?
    /// The list, as details and readiness name it: its setting and file name.
    public let list: String
    /// The list's nextUpdate plus the configured grace; nil when the list
    /// gives no nextUpdate.
    public let trustedUntil: Date?
}

/// When a trust list a tenant loaded goes stale: its nextUpdate, and the end
/// of the grace the operator allowed after it.
public struct TrustListDeadline: Sendable, Equatable {
    public let list: String
    public let nextUpdate: Date
    public let staleAfter: Date
}

/// What each of a tenant's trust anchors may vouch for. An anchor listed in
/// `trustAnchors` (or pinned) vouches for everything; one the tenant trusts
/// only through trust lists vouches for the docTypes those lists give it, and
/// only while one of those lists is fresh. Two lists that name one IACA add
/// up: it is trusted for what either allows, while either is fresh.
public struct AnchorScopes: Sendable {
    private struct Listing: Sendable {
        /// nil: every docType.
        let docTypes: Set<Identifier>?
        let list: String
        let trustedUntil: Date?

        func isFresh(at time: Date) -> Bool { trustedUntil.map { time <= $0 } ?? true }

        func allows(_ docType: Identifier) -> Bool { docTypes?.contains(docType) ?? true }
    }

    /// By SHA-256 fingerprint; only anchors no direct setting lists.
    private let listings: [[UInt8]: [Listing]]

    public static let none = AnchorScopes(direct: [], listed: [])

    public init(direct: [Certificate], listed: [ListedAnchor]) {
        let unrestricted = Set(direct.map(\.sha256Fingerprint))
        var listings: [[UInt8]: [Listing]] = [:]
        for anchor in listed where !unrestricted.contains(anchor.certificate.sha256Fingerprint) {
            let docTypes = anchor.docTypes.map { Set($0.map(Identifier.init)) }
            listings[anchor.certificate.sha256Fingerprint, default: []].append(
                Listing(docTypes: docTypes, list: anchor.list, trustedUntil: anchor.trustedUntil))
        }
        self.listings = listings
    }

    public enum Decision: Sendable, Equatable {
        case trusted
        /// Every list that names the anchor was past its nextUpdate (and grace) at the time.
        case stale(lists: [String])
        /// The fresh lists that name the anchor restrict it to other docTypes.
        case docTypeNotListed(docType: String, lists: [String])
    }

    /// Whether the path's `anchor` vouches, at `time`, for a document claiming `docTypes`.
    public func decision(anchor: Certificate, docTypes: [String], at time: Date) -> Decision {
        guard let listings = listings[anchor.sha256Fingerprint] else { return .trusted }
        let fresh = listings.filter { $0.isFresh(at: time) }
        guard !fresh.isEmpty else { return .stale(lists: listings.map(\.list)) }
        for docType in docTypes {
            let identifier = Identifier(docType)
            if !fresh.contains(where: { $0.allows(identifier) }) {
                return .docTypeNotListed(docType: docType, lists: fresh.map(\.list))
            }
        }
        return .trusted
    }
}

/// Apple's test issuer, which signs the mock IDs of Apple's sample, developer
/// profiles and test devices: trusted only by a test tenant (`testConditions`),
/// never by a production tenant, however it is listed.
public enum KnownTestIssuers {
    /// SHA-256 fingerprints of the certificates, computed from Apple's
    /// "Verify with Wallet" sample (shared/vectors/apple-verify-with-wallet-sample).
    static let fingerprints: [[UInt8]: String] = [
        // issuer_root.pem: CN=PassKit Identity Test Issuer Root CA, self-signed, 2022-03-31 … 2121-03-07.
        hexBytes("81ec73ca680daf9c22c80ade687ab9688bfec0d65471f6105e8c917d987fca52"): "PassKit Identity Test Issuer Root CA",
        // issuer_signing.pem: CN=PassKit Identity Test Document Signing, issued by the root above;
        // pinned as a document signer it would trust the same mock IDs.
        hexBytes("1b6cd5f875207aa5912ca57f84e6dd32268dbff091927367ab1f80d25f75abff"): "PassKit Identity Test Document Signing",
    ]

    /// The same names on another certificate (a test root Apple re-issues
    /// under its old name) are test issuers too.
    static let commonNames = Set(fingerprints.values)

    /// The test issuer `certificate` is, by fingerprint or by its subject's
    /// common name; nil for any other certificate.
    public static func name(of certificate: Certificate) -> String? {
        if let name = fingerprints[certificate.sha256Fingerprint] { return name }
        guard let commonName = certificate.facts.subjectCommonName else { return nil }
        return commonNames.first { $0.hasSameUTF8(as: commonName) }
    }

    private static func hexBytes(_ text: StaticString) -> [UInt8] {
        let digits = Array(text.description.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }
}
