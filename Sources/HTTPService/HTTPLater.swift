import Synchronization

/// A response that a handler cannot give yet (a long poll waiting for its
/// session's change). The handler returns `HTTPResponse.later(_:)` at once;
/// whoever learns the answer calls `complete`, from any thread. Meanwhile the
/// daemon holds the connection suspended: no thread, no deadline, no reads
/// (so whoever completes must bound the wait), until `complete`, the
/// client's hanging up (`whenAbandoned`; the daemon looks every second), or
/// the daemon's stop, which answers 503.
public final class HTTPLater: Sendable {
    private enum State {
        case waiting([@Sendable (HTTPResponse) -> Void])
        case done(HTTPResponse)
    }

    private enum Abandonment {
        case possible([@Sendable () -> Void])
        case abandoned
        /// Answered first: the callbacks were let go (they often hold what holds this).
        case moot
    }

    private let state = Mutex<State>(.waiting([]))
    private let abandonment = Mutex<Abandonment>(.possible([]))

    public init() {}

    /// The answer; only the first call counts. Whether it was the first.
    @discardableResult
    public func complete(_ response: HTTPResponse) -> Bool {
        let callbacks: [@Sendable (HTTPResponse) -> Void]? = state.withLock { state in
            guard case .waiting(let callbacks) = state else { return nil }
            state = .done(response)
            return callbacks
        }
        guard let callbacks else { return false }
        abandonment.withLock { if case .possible = $0 { $0 = .moot } }
        for callback in callbacks { callback(response) }
        return true
    }

    /// Runs `body` with the answer once there is one: at once (on this thread) if there is already.
    public func whenComplete(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        let done: HTTPResponse? = state.withLock { state in
            switch state {
            case .waiting(let callbacks):
                state = .waiting(callbacks + [body])
                return nil
            case .done(let response):
                return response
            }
        }
        if let done { body(done) }
    }

    /// The same answer, changed by `transform` when it comes (headers, a log
    /// line); the client's leaving reaches this one's `whenAbandoned`.
    public func map(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) -> HTTPLater {
        let mapped = HTTPLater()
        whenComplete { mapped.complete(transform($0)) }
        mapped.whenAbandoned { [self] in abandon() }
        return mapped
    }

    /// Runs `body` once if the client goes away before the answer (at once
    /// if it has already gone): whoever makes the answer may stop.
    /// Nothing runs once the answer was given.
    public func whenAbandoned(_ body: @escaping @Sendable () -> Void) {
        let gone = abandonment.withLock { abandonment -> Bool in
            switch abandonment {
            case .possible(let callbacks):
                abandonment = .possible(callbacks + [body])
                return false
            case .abandoned: return true
            case .moot: return false
            }
        }
        if gone { body() }
    }

    /// The client went away (the daemon calls this); idempotent.
    func abandon() {
        let callbacks = abandonment.withLock { abandonment -> [@Sendable () -> Void] in
            guard case .possible(let callbacks) = abandonment else { return [] }
            abandonment = .abandoned
            return callbacks
        }
        for callback in callbacks { callback() }
    }
}
