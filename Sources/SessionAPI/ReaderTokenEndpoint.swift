import Foundation
import HTTPService
import JSON

/// `POST /v1/reader-tokens`: `{readerInstanceIdentifier}` → `{token, expiresAt}`.
enum ReaderTokenEndpoint {
    static let maxIdentifierBytes = 256

    static func create(_ body: inout RequestBody, signer: ReaderTokenSigner?, now: Date, metrics: APIMetrics, tenant: String) throws(APIError) -> HTTPResponse {
        let identifier = try body.requiredString("readerInstanceIdentifier", maxBytes: maxIdentifierBytes)
        try body.finish()
        // Printable ASCII without spaces: what goes into `sub` is an identifier, never free text.
        guard identifier.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidField("readerInstanceIdentifier", expected: "printable ASCII without spaces")
        }
        guard let signer else { throw .notConfigured("readerTokens") }
        guard let token = try? signer.token(readerInstanceIdentifier: identifier, now: now) else { throw .internalError }
        metrics.readerTokens.increment()
        let answer: JSONObject = ["token": .string(token.compact), "expiresAt": .string(APITime.string(token.expiresAt))]
        return HTTPResponse(status: 201, headers: [("Content-Type", "application/json")], body: JSONValue.object(answer).jsonBytes(keyOrder: .insertion))
    }
}
