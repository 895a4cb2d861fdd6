import CEmbeddedFiles

/// The contract, Schemas/session-api.openapi.json, compiled into the binary
/// (CEmbeddedFiles), so the document served is always the one in the
/// repository and `make lint-schemas` checks.
enum OpenAPIDocument {
    static let bytes = EmbeddedFile.bytes(VERIDOC_EMBEDDED_SESSION_API_OPENAPI)
}

/// Sources/SessionAPI/veridoc-client.v1.js, compiled into the binary.
enum ClientScript {
    static let bytes = EmbeddedFile.bytes(VERIDOC_EMBEDDED_CLIENT_JS)
}

enum EmbeddedFile {
    /// A copy of one of CEmbeddedFiles's files.
    static func bytes(_ index: Int) -> [UInt8] {
        var count = 0
        let start = veridoc_embedded_file(index, &count)
        return Array(UnsafeBufferPointer(start: start, count: count))
    }
}
