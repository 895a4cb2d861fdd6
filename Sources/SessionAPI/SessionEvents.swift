import Dispatch
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
enum SessionEvents {
    static let heartbeat: TimeInterval = 5

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

    /// The stream of one session's events. It ends once the session has
    /// ended and the client has that event (sent now, or its `Last-Event-ID`
    /// says it had it), when serve drains, when the session can no longer be
    /// read, or when the client goes; then `onEnd` runs.
    static func stream(tenant: String, id: UUID, lastEventID: Int, service: SessionService, clock: @escaping @Sendable () -> Date,
                       draining: @escaping @Sendable () -> Bool, onEnd: @escaping @Sendable () -> Void) -> HTTPStream {
        let watch = Mutex<SessionWatch?>(nil)
        let beat = Mutex<Ticker?>(nil)
        // Taken out at the end: the watch's reads hold the stream, whose end holds these.
        let stream = HTTPStream(onEnd: {
            beat.withLock { ticker in
                defer { ticker = nil }
                return ticker
            }?.cancel()
            watch.withLock { watch in
                defer { watch = nil }
                return watch
            }?.end()
            onEnd()
        })
        // The last step sent (or the client's `Last-Event-ID`), and when the stream last sent anything.
        let progress = Mutex((sent: lastEventID, wroteAt: ProcessInfo.processInfo.systemUptime))
        // Heartbeats need no read of the session: a timer of their own.
        let ticker = Ticker(every: heartbeat) {
            let now = ProcessInfo.processInfo.systemUptime
            guard now - progress.withLock({ $0.wroteAt }) >= heartbeat - 0.1 else { return }
            if stream.send(Array(": heartbeat\n\n".utf8)) { progress.withLock { $0.wroteAt = now } }
        }
        beat.withLock { $0 = ticker }
        let started = SessionWatch(id: id, service: service) {
            guard stream.isOpen, !draining(), let session = try? SessionLookup.find(tenant: tenant, id: id, service: service, now: clock()) else {
                stream.finish()
                return nil
            }
            let state = session.state(at: clock())
            let step = Self.step(state)
            let now = ProcessInfo.processInfo.systemUptime
            let sent = progress.withLock { $0.sent }
            if step > sent {
                let body = JSONValue.object(APIAnswers.sessionBody(session, at: clock())).jsonString(keyOrder: .insertion)
                guard stream.send(Array("id: \(step)\nevent: session\ndata: \(body)\n\n".utf8)) else { return nil }
                progress.withLock { $0 = (step, now) }
            }
            if state.isSettled {
                stream.finish()
                return nil
            }
            // Nothing more to send now: read again at the session's change, the moment it may end, or the safety net's interval.
            let untilEnd = session.row.expiresAt.addingTimeInterval(session.processingGrace).timeIntervalSince(clock())
            let untilChange = state == .pending ? session.row.expiresAt.timeIntervalSince(clock()) : untilEnd
            return min(service.rereadInterval, max(0.05, untilChange + 0.05))
        }
        watch.withLock { $0 = started }
        // Gone already: the stream's end came before the watch and the ticker were kept.
        if !stream.isOpen {
            started.end()
            ticker.cancel()
        }
        return stream
    }
}

/// A repeating timer on Dispatch's threads until cancelled.
///
/// Unchecked Sendable: a Dispatch source may be used from any thread; the
/// type is not marked so.
private final class Ticker: @unchecked Sendable {
    private let timer: DispatchSourceTimer

    init(every interval: TimeInterval, _ tick: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler(handler: tick)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.resume()
    }

    func cancel() { timer.cancel() }
}
