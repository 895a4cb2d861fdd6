import CLibPQ
import Synchronization

/// Where the server's notices and warnings go (a `CREATE … IF NOT EXISTS`
/// that found the object, a deprecation). Their text can carry values from
/// statements, so only the severity and SQLSTATE are handed on; without a
/// route they are dropped (libpq would print them to stderr).
public enum PostgresNotices {
    public struct Notice: Sendable {
        /// `NOTICE`, `WARNING`, … (not localized).
        public let severity: String
        public let sqlState: String
    }

    public typealias Handler = @Sendable (Notice) -> Void

    private static let handler = Mutex<Handler?>(nil)

    public static func route(_ handler: @escaping Handler) {
        self.handler.withLock { $0 = handler }
    }

    static func install(on connection: OpaquePointer) {
        PQsetNoticeReceiver(connection, { _, result in
            guard let result else { return }
            func field(_ code: Int32) -> String { PQresultErrorField(result, code).map { String(cString: $0) } ?? "" }
            let notice = Notice(severity: field(Int32(UInt8(ascii: "V"))), sqlState: field(Int32(UInt8(ascii: "C"))))
            PostgresNotices.handler.withLock { $0 }?(notice)
        }, nil)
    }
}
