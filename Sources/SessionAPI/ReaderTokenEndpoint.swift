import Foundation

/// `POST /v1/reader-tokens`: `{readerInstanceIdentifier}` → `{token, expiresAt}`.
enum ReaderTokenEndpoint {
    static let maxIdentifierBytes = 256

    /// The body's reader instance identifier, read strictly.
    static func read(_ body: inout RequestBody) throws(APIError) -> String {
        let identifier = try body.requiredString("readerInstanceIdentifier", maxBytes: maxIdentifierBytes)
        try body.finish()
        // Printable ASCII without spaces: what goes into `sub` is an identifier, never free text.
        guard identifier.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidField("readerInstanceIdentifier", expected: "printable ASCII without spaces")
        }
        return identifier
    }

    /// A token for the reader, signed with the tenant's key.
    static func issue(_ identifier: String, signer: ReaderTokenSigner?, now: Date, metrics: APIMetrics) throws(SessionError) -> ReaderTokenSigner.Token {
        guard let signer else { throw .notConfigured("readerTokens") }
        guard let token = try? signer.token(readerInstanceIdentifier: identifier, now: now) else { throw .internalFailure }
        metrics.readerTokens.increment()
        return token
    }
}
