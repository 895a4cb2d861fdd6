import Foundation
import Storage
import Testing
import TestSupport

/// Many clients waiting on one session over real HTTP, some of them gone
/// before it ends: each one still there gets the outcome once (an event
/// stream, a long poll), and once it is over nothing is left of any of them
/// in serve: no stream or poll counted, no connection held open.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct WaiterFanOutTests {
    let fixture: ServeFixture

    /// Room for every client of the test from one address, all waiting at once.
    init() throws {
        fixture = try ServeFixture(burst: 10_000, serveSettings: ["maxWaitingPollsPerTenant": 200, "maxConnectionsPerAddress": 200])
    }

    var authorization: (String, String) { ("Authorization", "Bearer \(ServeFixture.acmeKey)") }

    func gauge(_ name: String) throws -> Double? {
        try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body).values(name).first?.value
    }

    /// Connections to serve's API port still open on either side (ESTABLISHED,
    /// or CLOSE_WAIT: the client went and serve never closed), from
    /// /proc/net/tcp; other tests' servers listen on other ports.
    func openConnections() throws -> Int {
        let port = String(format: "%04X", fixture.port)
        // Read to the end: procfs files report a size of 0, which a whole-file read takes at its word.
        guard let table = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() else { throw TestFailure("cannot read /proc/net/tcp") }
        return String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(":" + port) && (fields[3] == "01" || fields[3] == "08")
        }.count
    }

    /// A client that leaves while its long poll waits gives its place under
    /// the caps back at once, not at the end of its wait: the session is
    /// still pending, and the waits are 30 s.
    @Test func aLongPollWhoseClientLeftGivesItsPlaceBack() throws {
        let created = try RawHTTP.request("POST", "/v1/sessions", port: fixture.port, headers: [authorization, ("Content-Type", "application/json")],
                                          body: Array(#"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":120}"#.utf8))
        let id = try #require((try? JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any])?["id"] as? String, "\(created.body)")
        let before = try gauge("veridoc_api_long_polls_waiting") ?? 0
        var leaving: [RawSocket] = []
        for _ in 0..<10 {
            let socket = try RawSocket(port: fixture.port)
            socket.send("GET /v1/sessions/\(id)?wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.acmeKey)\r\n\r\n")
            leaving.append(socket)
        }
        #expect(eventually(20) { (try? gauge("veridoc_api_long_polls_waiting")) == before + 10 }, "the polls wait")
        leaving.removeAll()
        #expect(eventually(20) { (try? gauge("veridoc_api_long_polls_waiting")) == before },
                "the polls of clients gone still count: \(String(describing: try? gauge("veridoc_api_long_polls_waiting")))")
    }

    @Test func everyWaiterGetsTheOutcomeOnceAndTheGoneLeaveNothing() throws {
        let created = try RawHTTP.request("POST", "/v1/sessions", port: fixture.port, headers: [authorization, ("Content-Type", "application/json")],
                                          body: Array(#"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":120}"#.utf8))
        let id = try #require((try? JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any])?["id"] as? String, "\(created.body)")
        let (streams, polls, gone) = (20, 20, 10)

        // Clients that stay: each reads its answer to the end on a thread of its own.
        let answers = Answers()
        var readers: [Thread] = []
        for index in 0..<(streams + polls) {
            let path = index < streams ? "/v1/sessions/\(id)/events" : "/v1/sessions/\(id)?wait=30"
            let reader = Thread { [port = fixture.port, authorization] in
                answers.add(index, try? RawHTTP.request("GET", path, port: port, headers: [authorization], timeout: 90))
            }
            reader.start()
            readers.append(reader)
        }
        // Clients that go: a request, then the connection closed before the session ends.
        var leaving: [RawSocket] = []
        for index in 0..<(2 * gone) {
            let socket = try RawSocket(port: fixture.port)
            let target = index < gone ? "/v1/sessions/\(id)/events" : "/v1/sessions/\(id)?wait=30"
            socket.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.acmeKey)\r\n\r\n")
            leaving.append(socket)
        }
        #expect(eventually(60) {
            (try? gauge("veridoc_api_event_streams_open")) == Double(streams + gone) && (try? gauge("veridoc_api_long_polls_waiting")) == Double(polls + gone)
        }, "every client waits: \(String(describing: try? gauge("veridoc_api_event_streams_open"))) streams, \(String(describing: try? gauge("veridoc_api_long_polls_waiting"))) polls")
        #expect(try openConnections() >= streams + polls + 2 * gone, "the connection count sees the clients")
        leaving.removeAll()

        let connection = try fixture.database.connect()
        defer { connection.close() }
        let outcome = #"{"id":"fan-out","data":{"requestId":"r-fan-out","verdict":"verified"}}"#
        _ = try connection.execute(SessionsTable.complete([.init(tenant: "acme", id: try #require(UUID(uuidString: id)), status: .verified, outcome: outcome)]))

        #expect(eventually(90) { answers.count == streams + polls }, "every waiting client was answered: \(answers.count)")
        for index in 0..<streams {
            let body = answers[index]?.body ?? ""
            #expect(body.components(separatedBy: #""status":"verified""#).count - 1 == 1, "stream \(index) got the outcome once: \(body.suffix(400))")
        }
        for index in streams..<(streams + polls) {
            let object = (try? JSONSerialization.jsonObject(with: Data((answers[index]?.body ?? "").utf8))) as? [String: Any]
            #expect(answers[index]?.status == 200 && object?["status"] as? String == "verified", "poll \(index)")
        }
        let left = eventually(60) {
            (try? gauge("veridoc_api_event_streams_open")) == 0 && (try? gauge("veridoc_api_long_polls_waiting")) == 0 && (try? openConnections()) == 0
        }
        let state = "\(String(describing: try? gauge("veridoc_api_event_streams_open"))) streams, "
            + "\(String(describing: try? gauge("veridoc_api_long_polls_waiting"))) polls, \(String(describing: try? openConnections())) connections"
        #expect(left, "nothing left: \(state)")
    }
}

/// What each staying client read, by its index.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [Int: RawHTTP.Response?] = [:]

    func add(_ index: Int, _ response: RawHTTP.Response?) {
        lock.lock()
        answers[index] = response
        lock.unlock()
    }

    var count: Int { lock.lock(); defer { lock.unlock() }; return answers.count }

    subscript(index: Int) -> RawHTTP.Response? { lock.lock(); defer { lock.unlock() }; return answers[index] ?? nil }
}
