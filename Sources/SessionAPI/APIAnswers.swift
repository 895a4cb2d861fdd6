import Foundation
import HTTPService
import JSON
import Storage
import Verification
import Webhooks

/// Each operation's answer as the contract writes it (status, headers, JSON
/// body in the documented key order): the one place where what an operation
/// did becomes HTTP.
enum APIAnswers {
    /// `POST /v1/sessions`: 201 with the session's location.
    static func created(_ session: SessionCreation.Created) -> HTTPResponse {
        let id = session.id.uuidString.lowercased()
        var answer: JSONObject = ["id": .string(id), "flow": .string(session.flow.rawValue), "expiresAt": .string(APITime.string(session.expiresAt))]
        switch session.flow {
        case .appleWalletApp:
            answer["nonce"] = .string(Base64.encodeStandard(session.nonce))
            answer["merchantId"] = .string(session.audience)
        case .appleWalletWeb:
            answer["request"] = .object(SessionCreation.annexCRequest(session.webRequest ?? ("", "")))
            if let options = session.credentialRequestOptions { answer["credentialRequestOptions"] = .object(options) }
        case .openID4VPDCAPI:
            answer["request"] = .object(session.openID4VPRequest ?? [:])
        case .isoDeviceResponse:
            break
        }
        if let reference = session.reference { answer["reference"] = .string(reference) }
        var response = json(201, answer, location: "/v1/sessions/\(id)")
        if session.replayed { response.headers.append(("Idempotent-Replayed", "true")) }
        return response
    }

    /// `GET /v1/sessions?reference=`: the sessions found, newest first, each as `GET /v1/sessions/{id}` shows it.
    static func sessions(_ sessions: [SessionsTable.Stored], at now: Date) -> HTTPResponse {
        json(200, ["sessions": .array(sessions.map { .object(sessionBody($0, at: now)) })])
    }

    /// `POST /v1/sessions/{id}/response`: 202, the response is with the workers.
    static func accepted(_ id: UUID) -> HTTPResponse {
        let text = id.uuidString.lowercased()
        return json(202, ["id": .string(text), "status": .string(SessionState.processing.rawValue)], location: "/v1/sessions/\(text)")
    }

    /// `GET /v1/sessions/{id}`: the session at `now`, and once the worker
    /// stored the result, the outcome event's `data` exactly as the outcome
    /// topic carries it.
    static func session(_ session: SessionsTable.Stored, at now: Date) -> HTTPResponse {
        json(200, sessionBody(session, at: now))
    }

    static func sessionBody(_ session: SessionsTable.Stored, at now: Date) -> JSONObject {
        var object: JSONObject = [
            "id": .string(session.row.id.uuidString.lowercased()), "flow": .string(session.row.flow),
            "status": .string(session.state(at: now).rawValue), "createdAt": .string(APITime.string(session.row.createdAt)),
            "expiresAt": .string(APITime.string(session.row.expiresAt)),
        ]
        if let reference = session.row.reference { object["reference"] = .string(reference) }
        if session.state(at: now) == .failed {
            object["failureReason"] = .string(session.failureReason ?? SessionsTable.FailureReason.verificationTimeout.rawValue)
        }
        if let outcome = session.outcome, let event = try? JSONParser(maxDepth: 64).parse(Array(outcome.utf8)), let data = event["data"] {
            object["outcome"] = data
        }
        return object
    }

    /// `POST /v1/reader-tokens`: 201 with the token.
    static func readerToken(_ token: ReaderTokenSigner.Token) -> HTTPResponse {
        json(201, ["token": .string(token.compact), "expiresAt": .string(APITime.string(token.expiresAt))])
    }

    /// `GET /v1/webhook-keys`: the caller's endpoints that sign `v1a`, each
    /// key as Standard Webhooks writes it and as a JWK. Public keys only:
    /// nothing a receiver must keep secret.
    static func webhookKeys(_ keys: [APITenants.WebhookKey]) -> HTTPResponse {
        json(200, ["keys": .array(keys.map { key in
            .object(["endpoint": .string(key.endpoint), "algorithm": "Ed25519", "publicKey": .string(WebhookSigner.standardPublicKey(key.publicKey)),
                     "jwk": .object(["kty": "OKP", "crv": "Ed25519", "x": .string(Base64.encodeURL(key.publicKey))])])
        })])
    }

    private static func json(_ status: UInt32, _ object: JSONObject, location: String? = nil) -> HTTPResponse {
        var headers = [("Content-Type", "application/json")]
        if let location { headers.append(("Location", location)) }
        return HTTPResponse(status: status, headers: headers, body: JSONValue.object(object).jsonBytes(keyOrder: .insertion))
    }
}
