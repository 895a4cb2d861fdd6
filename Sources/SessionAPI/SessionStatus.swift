import Foundation
import HTTPService
import JSON
import Storage

/// `GET /v1/sessions/{id}`: where the session stands, and once the worker
/// stored the result, the outcome event's `data` exactly as the outcome
/// topic carries it. `?wait=SECONDS` (at most 30) holds the answer until the
/// status changes or the time is up.
enum SessionStatus {
    static let maxWaitSeconds = 30

    static func find(tenant: String, id: UUID, service: SessionService) throws(APIError) -> SessionsTable.Stored? {
        try service.pool.with { connection in SessionsTable.stored(try connection.execute(SessionsTable.find(tenant: tenant, id: id))) }
    }

    /// The status a client sees: a session nobody answered is `expired` once its time is up.
    static func status(of session: SessionsTable.Stored, at now: Date) -> String {
        session.status == "pending" && session.row.expiresAt <= now ? "expired" : session.status
    }

    static func wait(_ query: [String: String]) throws(APIError) -> Int {
        guard let text = query["wait"] else { return 0 }
        guard let seconds = Int(text), (0...maxWaitSeconds).contains(seconds) else {
            throw .invalidField("wait", expected: "a whole number of seconds from 0 to \(maxWaitSeconds)")
        }
        return seconds
    }

    static func show(tenant: String, id: UUID, wait: Int, service: SessionService, clock: @Sendable () -> Date) throws(APIError) -> HTTPResponse {
        guard var session = try find(tenant: tenant, id: id, service: service) else { throw .notFound }
        let first = status(of: session, at: clock())
        let deadline = ProcessInfo.processInfo.systemUptime + TimeInterval(wait)
        while wait > 0, ["pending", "processing"].contains(status(of: session, at: clock())), ProcessInfo.processInfo.systemUptime < deadline {
            Thread.sleep(forTimeInterval: service.pollInterval)
            guard let again = try find(tenant: tenant, id: id, service: service) else { throw .notFound }
            session = again
            if status(of: session, at: clock()) != first { break }
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                            body: JSONValue.object(body(session, at: clock())).jsonBytes(keyOrder: .insertion))
    }

    static func body(_ session: SessionsTable.Stored, at now: Date) -> JSONObject {
        var object: JSONObject = [
            "id": .string(session.row.id.uuidString.lowercased()), "flow": .string(session.row.flow),
            "status": .string(status(of: session, at: now)), "createdAt": .string(APITime.string(session.row.createdAt)),
            "expiresAt": .string(APITime.string(session.row.expiresAt)),
        ]
        if let reference = session.row.reference { object["reference"] = .string(reference) }
        if let outcome = session.outcome, let event = try? JSONParser(maxDepth: 64).parse(Array(outcome.utf8)), let data = event["data"] {
            object["outcome"] = data
        }
        return object
    }
}
