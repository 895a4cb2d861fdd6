import CEmbeddedFiles

/// The contract, Schemas/session-api.openapi.json, compiled into the binary
/// (CEmbeddedFiles), so the document served is always the one in the
/// repository and `make lint-schemas` checks.
enum OpenAPIDocument {
    static let bytes = EmbeddedFile.bytes(veridoc_embedded_session_api_openapi)
}

/// Sources/SessionAPI/veridoc-client.v1.js, compiled into the binary.
enum ClientScript {
    static let bytes = EmbeddedFile.bytes(veridoc_embedded_client_js)
}

enum EmbeddedFile {
    /// A copy of what one of CEmbeddedFiles's functions returns.
    static func bytes(_ file: (UnsafeMutablePointer<Int>) -> UnsafePointer<UInt8>) -> [UInt8] {
        var count = 0
        let start = file(&count)
        return Array(UnsafeBufferPointer(start: start, count: count))
    }
}
