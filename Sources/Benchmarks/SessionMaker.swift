import Foundation
import Synchronization

/// Sessions for the waiters held (`WaitersBench`), made through the API:
/// each created (`POST /v1/sessions`) and then given a response
/// (`POST /v1/sessions/{id}/response`), so that it waits for its verdict
/// (processing) as the session of a client waiting for its outcome does.
/// Several threads at once: serve's session writer commits the creations
/// that arrive together in one statement, so one at a time would wait for a
/// commit each.
final class SessionMaker: Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let threads = 16
    /// A response the app flow takes: the workers, not serve, read what it holds.
    static let response = #"{"payload":"AAAA"}"#

    let port: Int
    let apiKey: String
    private let made = Mutex<[Int: String]>([:])
    private let failure = Mutex<String?>(nil)

    init(port: Int, apiKey: String) {
        self.port = port
        self.apiKey = apiKey
    }

    /// The ids of `count` sessions now processing, in the order made.
    func processing(_ count: Int) throws(Failure) -> [String] {
        let done = DispatchGroup()
        for first in 0..<Self.threads {
            done.enter()
            Thread { [self] in
                defer { done.leave() }
                for index in stride(from: first, to: count, by: Self.threads) where failure.withLock({ $0 == nil }) {
                    do {
                        let id = try make()
                        made.withLock { $0[index] = id }
                    } catch {
                        failure.withLock { $0 = $0 ?? "\(error)" }
                    }
                }
            }.start()
        }
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw Failure(description: "making the waiters' sessions: \(failure)") }
        return made.withLock { made in (0..<count).map { made[$0]! } }
    }

    private func make() throws -> String {
        let headers = [("Authorization", "Bearer \(apiKey)"), ("Content-Type", "application/json")]
        let created = try LoopbackHTTP.request("POST", "/v1/sessions", port: port, headers: headers, body: APIBench.sessionBody)
        guard created.status == 201, let object = try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any],
              let id = object["id"] as? String else { throw Failure(description: "POST /v1/sessions answered \(created.status)") }
        let answered = try LoopbackHTTP.request("POST", "/v1/sessions/\(id)/response", port: port, headers: headers, body: Self.response)
        guard answered.status == 202 else { throw Failure(description: "POST /v1/sessions/{id}/response answered \(answered.status)") }
        return id
    }
}
