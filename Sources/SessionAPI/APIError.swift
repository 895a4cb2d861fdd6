import HTTPService
import JSON

/// Every refusal the session API answers, each with its status and a stable
/// code a client can switch on. Details name a field or a limit, never a
/// value from the request: bodies may hold personal data and keys.
public enum APIError: Error, Equatable, Sendable {
    /// No `Authorization: Bearer` key, or one no tenant holds.
    case unauthorized
    /// No such route, or a session this key's tenant does not own.
    case notFound
    case methodNotAllowed(allow: String)
    /// The body is not a JSON object.
    case malformedJSON
    /// A field the request may not carry.
    case unknownField(String)
    case missingField(String)
    /// A field of the wrong type or out of its range; `expected` says what is allowed.
    case invalidField(String, expected: String)
    /// The tenant has no configuration for what was asked (reader tokens, a flow).
    case notConfigured(String)
    /// No certificate of the named signer setting is valid until the session would end.
    case certificateExpired(String)
    case tooManyRequests(retryAfterSeconds: Int)
    case unsupportedMediaType
    /// The request event built from the answer would be larger than an event may be.
    case eventTooLarge(limit: Int)
    /// The session has expired: it takes no response any more.
    case sessionExpired
    /// The session already took a different response.
    case responseConflict
    /// An earlier `POST /v1/sessions` used this Idempotency-Key with another body.
    case idempotencyConflict
    /// The database or the broker cannot be reached now; retry.
    case unavailable(String)
    /// Something of ours failed; the log has the reason, the client only this.
    case internalError

    public var status: UInt32 {
        switch self {
        case .unauthorized: 401
        case .notFound: 404
        case .methodNotAllowed: 405
        case .malformedJSON, .unknownField, .missingField, .invalidField: 400
        case .notConfigured, .certificateExpired, .sessionExpired, .responseConflict: 409
        case .unavailable: 503
        case .eventTooLarge: 413
        case .tooManyRequests: 429
        case .unsupportedMediaType: 415
        case .idempotencyConflict: 422
        case .internalError: 500
        }
    }

    /// The stable code (Schemas/session-api.openapi.json lists them).
    public var code: String {
        switch self {
        case .unauthorized: "unauthorized"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .malformedJSON: "malformed_json"
        case .unknownField: "unknown_field"
        case .missingField: "missing_field"
        case .invalidField: "invalid_field"
        case .notConfigured: "not_configured"
        case .certificateExpired: "certificate_expired"
        case .tooManyRequests: "too_many_requests"
        case .unsupportedMediaType: "unsupported_media_type"
        case .eventTooLarge: "body_too_large"
        case .sessionExpired: "session_expired"
        case .responseConflict: "response_conflict"
        case .idempotencyConflict: "idempotency_conflict"
        case .unavailable: "unavailable"
        case .internalError: "internal_error"
        }
    }

    public static let allCodes = ["unauthorized", "not_found", "method_not_allowed", "malformed_json", "unknown_field", "missing_field",
                                  "invalid_field", "not_configured", "too_many_requests", "unsupported_media_type", "session_expired",
                                  "response_conflict", "unavailable", "internal_error", "body_too_large", "malformed_request", "certificate_expired", "idempotency_conflict"]

    var field: String? {
        switch self {
        case .unknownField(let field), .missingField(let field), .invalidField(let field, _): field
        default: nil
        }
    }

    var detail: String {
        switch self {
        case .unauthorized: "an API key is required: Authorization: Bearer <key>"
        case .notFound: "no such resource"
        case .methodNotAllowed(let allow): "allowed: \(allow)"
        case .malformedJSON: "the body is not a JSON object"
        case .unknownField(let field): "\(field) is not a field of this request"
        case .missingField(let field): "\(field) is required"
        case .invalidField(let field, let expected): "\(field): \(expected)"
        case .notConfigured(let what): "this tenant has no \(what) configured"
        case .certificateExpired(let setting):
            "no certificate of this tenant's \(setting) is valid from now until the session would end; configure its renewal"
        case .tooManyRequests(let seconds): "rate limit reached; retry after \(seconds) s"
        case .unsupportedMediaType: "the body must be application/json"
        case .eventTooLarge(let limit): "the request event for this answer would be larger than \(limit) bytes"
        case .sessionExpired: "the session has expired; create a new one"
        case .responseConflict: "the session already took a different response"
        case .idempotencyConflict: "this Idempotency-Key was used with another body; use a new key for another session"
        case .unavailable(let what): "the \(what) cannot be reached now; retry"
        case .internalError: "the request could not be completed"
        }
    }

    /// A session operation's failure as the API answers it.
    init(_ error: SessionError) {
        switch error {
        case .notFound: self = .notFound
        case .expired: self = .sessionExpired
        case .responseConflict: self = .responseConflict
        case .idempotencyConflict: self = .idempotencyConflict
        case .eventTooLarge(let limit): self = .eventTooLarge(limit: limit)
        case .notConfigured(let what): self = .notConfigured(what)
        case .certificateExpired(let setting): self = .certificateExpired(setting)
        case .unavailable(let dependency): self = .unavailable(dependency.rawValue)
        case .internalFailure: self = .internalError
        }
    }

    /// Runs a session operation, its failure answered as the API's.
    static func mapping<T>(_ operation: () throws(SessionError) -> T) throws(APIError) -> T {
        do { return try operation() } catch { throw APIError(error) }
    }

    var response: HTTPResponse {
        var object: JSONObject = ["error": .string(code), "detail": .string(detail)]
        if let field { object["field"] = .string(field) }
        var response = HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: JSONValue.object(object).jsonBytes())
        switch self {
        case .unauthorized: response.headers.append(("WWW-Authenticate", "Bearer"))
        case .methodNotAllowed(let allow): response.headers.append(("Allow", allow))
        case .tooManyRequests(let seconds): response.headers.append(("Retry-After", String(seconds)))
        case .unavailable: response.headers.append(("Retry-After", "1"))
        default: break
        }
        return response
    }
}
