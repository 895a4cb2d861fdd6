import Foundation
import Postgres
import Revocation
import StatusList
import Storage

/// The status service's shared store in the workers' database
/// (`status_lists`): one connection, used by one fetch thread at a time. A
/// failed statement drops the connection and answers "nothing kept"; the
/// service then fetches as it would without a store.
final class PostgresListStore: SharedListStore, @unchecked Sendable {
    // `connection` is guarded by `lock`.
    private let lock = NSLock()
    private let connection: ReconnectingConnection

    init(connect: @escaping @Sendable () throws -> PostgresConnection) {
        connection = ReconnectingConnection(connect)
    }

    func load(_ source: ListSource, uri: String) -> SharedList? {
        lock.lock()
        defer { lock.unlock() }
        do {
            let rows = try connection.get().execute(StatusListsTable.find(Self.kind(source), uri: uri))
            guard rows.rowCount == 1, let token = rows.bytes(0, "token"), let fetchedAt = rows.date(0, "fetched_at"),
                  let expiresAt = rows.date(0, "expires_at")
            else { return nil }
            return SharedList(token: token, etag: rows.string(0, "etag"), lastModified: rows.string(0, "last_modified"), fetchedAt: fetchedAt,
                              expiresAt: expiresAt)
        } catch {
            connection.drop()
            return nil
        }
    }

    func save(_ source: ListSource, uri: String, _ list: SharedList) {
        lock.lock()
        defer { lock.unlock() }
        do {
            try connection.get().execute(StatusListsTable.upsert(StatusListsTable.Row(
                kind: Self.kind(source), uri: uri, token: list.token, etag: list.etag, lastModified: list.lastModified,
                fetchedAt: list.fetchedAt, expiresAt: list.expiresAt)))
        } catch {
            connection.drop()
        }
    }

    func close() {
        lock.lock()
        connection.drop()
        lock.unlock()
    }

    private static func kind(_ source: ListSource) -> StatusReferencesTable.Kind {
        switch source {
        case .token(.statusList): .statusList
        case .token(.identifierList): .identifierList
        case .certificateRevocationList: .certificateRevocationList
        }
    }
}
