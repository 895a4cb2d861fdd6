import Foundation
import HTTPService
import JSON
import Storage
import Synchronization

/// `GET /v1/sessions/{id}/events`: the session's state as server-sent
/// events, one `session` event per state it reaches (its `id` is the
/// state's step: 1 pending, 2 processing, 3 an end), the body each as
/// `GET /v1/sessions/{id}` shows it; the stream ends after the last. A
/// client that reconnects with `Last-Event-ID` gets only later steps. A
/// comment line goes out every `heartbeat` seconds while nothing changes,
/// so proxies keep the connection and a client that left is noticed.
/// Woken by the session's notification (`SessionNotifier`), like long polls.
final class SessionEvents: @unchecked Sendable {
    static let heartbeat: TimeInterval = 5

    private let tenant: String
    private let id: UUID
    private let service: SessionService
    private let clock: @Sendable () -> Date
    private let draining: @Sendable () -> Bool
    private let waiter: SessionNotifier.Waiter
    /// The last step sent (or the client's `Last-Event-ID`). Touched only by the connection's thread.
    private var sent: Int
    private var finished = false

    init(tenant: String, id: UUID, lastEventID: Int, service: SessionService, clock: @escaping @Sendable () -> Date,
         draining: @escaping @Sendable () -> Bool) {
        self.tenant = tenant
        self.id = id
        self.service = service
        self.clock = clock
        self.draining = draining
        sent = lastEventID
        // Registered before the first read, as a long poll's is.
        waiter = service.notifier.register(id)
    }

    deinit { service.notifier.unregister(waiter) }

    /// The step of a state: what `Last-Event-ID` counts.
    static func step(_ state: SessionState) -> Int {
        switch state {
        case .pending: 1
        case .processing: 2
        default: 3
        }
    }

    /// `Last-Event-ID`, as this stream numbers its events (0 when absent or not one of them).
    static func lastEventID(_ header: String?) -> Int {
        header.flatMap(Int.init).map { (0...3).contains($0) ? $0 : 0 } ?? 0
    }

    /// The next bytes of the stream: an event, a heartbeat comment, or nil
    /// at its end. Ends once the session has ended and the client has that
    /// event (sent now, or its `Last-Event-ID` says it had it).
    func next() -> [UInt8]? {
        while !finished, !draining() {
            guard let session = try? SessionLookup.find(tenant: tenant, id: id, service: service, now: clock()) else { return nil }
            let state = session.state(at: clock())
            let step = Self.step(state)
            if step > sent {
                sent = step
                finished = state.isSettled
                let body = JSONValue.object(APIAnswers.sessionBody(session, at: clock())).jsonString(keyOrder: .insertion)
                return Array("id: \(step)\nevent: session\ndata: \(body)\n\n".utf8)
            }
            if state.isSettled { return nil }
            // Nothing new: wait for the session's change, the moment it may end, or the heartbeat.
            let untilEnd = session.row.expiresAt.addingTimeInterval(session.processingGrace).timeIntervalSince(clock())
            let untilChange = state == .pending ? session.row.expiresAt.timeIntervalSince(clock()) : untilEnd
            let wait = min(Self.heartbeat, max(0.05, untilChange + 0.05))
            if !waiter.wait(timeout: wait) && wait >= Self.heartbeat { return Array(": heartbeat\n\n".utf8) }
        }
        return nil
    }
}
