/// What a session operation can fail with, in the session's own terms: the
/// edge (`APIError.init(_:)`) alone decides which HTTP status and code each
/// becomes, so the operations can be called from anything, not only HTTP.
enum SessionError: Error, Equatable, Sendable {
    /// The tenant has no such session (never the tenant's, or gone).
    case notFound
    /// The session's time is up: it takes no response any more.
    case expired
    /// The session already took a different response.
    case responseConflict
    /// An earlier creation used this Idempotency-Key with another body.
    case idempotencyConflict
    /// The request event built from the answer would be larger than `limit` bytes.
    case eventTooLarge(limit: Int)
    /// The tenant has no configuration for what was asked (`readerTokens`).
    case notConfigured(String)
    /// None of the signers of this setting (`webReader`, `openID4VPVerifier`)
    /// is valid from now until the session would end.
    case certificateExpired(String)
    /// A dependency cannot be reached now; worth retrying.
    case unavailable(Dependency)
    /// Something of ours failed (a stored row we cannot read, a signer that refuses).
    case internalFailure

    enum Dependency: String, Sendable {
        case database, broker
    }
}
