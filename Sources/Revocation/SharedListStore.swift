import Foundation
import StatusList

/// Where the status service keeps the lists it fetched for other processes:
/// the workers' database, so that every worker and a restarted one start
/// from lists already fetched. What is kept is the signed token or CRL as fetched;
/// whoever loads it parses and verifies it again. Failures are the store's
/// to absorb: the service then fetches as if nothing were kept.
public protocol SharedListStore: Sendable {
    func load(_ source: ListSource, uri: String) -> SharedList?
    func save(_ source: ListSource, uri: String, _ list: SharedList)
}

/// One fetched list (a token or a CRL, as fetched) with its validators.
public struct SharedList: Sendable, Equatable {
    public var token: [UInt8]
    public var etag: String?
    public var lastModified: String?
    public var fetchedAt: Date
    public var expiresAt: Date

    public init(token: [UInt8], etag: String?, lastModified: String?, fetchedAt: Date, expiresAt: Date) {
        self.token = token
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
    }
}
