/// The contract, Schemas/session-api.openapi.json, compiled into the binary
/// (SwiftPM's embedInCode), so the document served is always the one in the
/// repository and `make lint-schemas` checks.
enum OpenAPIDocument {
    static let bytes: [UInt8] = PackageResources.session_api_openapi_json
}
