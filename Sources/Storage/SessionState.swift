/// Where a session stands, as `sessions.status` stores it (the column's CHECK
/// lists the same values) and as `GET /v1/sessions/{id}` shows it.
public enum SessionState: String, Sendable, CaseIterable {
    /// Created, no response taken yet.
    case pending
    /// A response was taken and sent to the workers.
    case processing
    /// Never stored: a pending session past its expiry is shown as expired,
    /// so that no job has to sweep the table for the answer to be right.
    case expired
    case verified
    case rejected
    case testVerified = "test_verified"
    case testRejected = "test_rejected"
    /// Still processing when the session expired: no verdict came in time
    /// (`failureReason` says why). A verdict after it would be for an
    /// expired nonce, so none is waited for.
    case failed

    /// A session's end, from the worker's verdict (`VerificationResult.verdict`).
    public init?(verdict: String) {
        guard let state = SessionState(rawValue: verdict), state.isSettled, state != .expired, state != .failed else { return nil }
        self = state
    }

    /// Whether the state can still change.
    public var isSettled: Bool { self != .pending && self != .processing }
}
