import JSON

/// What the browser's promise resolved with for an OpenID4VP request over
/// the Digital Credentials API (OpenID4VP 1.0 Appendix A), as the event's
/// `data.response` carries it.
public enum OpenID4VPResponse: Sendable {
    /// `{"response": "<compact JWE>"}`: `response_mode` `dc_api.jwt`.
    case encrypted(String)
    /// `{"vp_token": {...}}`: `response_mode` `dc_api`, in the clear.
    case unencrypted(JSONObject)
    /// `{"error": "<code>", "error_description"?: "..."}`: the wallet declined
    /// or failed. Only the code is kept, and only when it is a plain token
    /// (OAuth's error codes are): a description is the wallet's free text.
    case walletError(code: String)

    /// The longest compact JWE accepted: the event's own limit bounds it
    /// too, but a JWE this long holds no response a wallet sends.
    public static let maxCompactBytes = 4 << 20
    /// The longest nonce accepted: Veridoc's are 60 characters, and OpenID4VP
    /// asks for enough entropy, not for length.
    public static let maxNonceBytes = 512
    /// The shortest: OpenID4VP asks the verifier for a fresh random nonce
    /// with enough entropy, and a shorter text holds too little to keep a
    /// presentation from being replayed into another transaction (16
    /// base64url characters hold 96 bits).
    public static let minNonceBytes = 16
    /// The longest DCQL credential query id an event may name.
    public static let maxCredentialQueryIDBytes = 256

    /// Whether `id` is a DCQL credential query id (OpenID4VP 1.0 §6.1):
    /// ASCII letters, digits, `_` and `-`, here at most 256 of them.
    public static func isCredentialQueryID(_ id: String) -> Bool {
        (1...maxCredentialQueryIDBytes).contains(id.utf8.count) && id.utf8.allSatisfy(isTokenByte)
    }

    /// ASCII letters, digits, `_` and `-`: what DCQL ids and OAuth error codes are made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// Why `value` is not a response object this flow reads; nil when it is.
    /// For the session API, which names the problem before an event is made.
    public static func problem(in value: JSONValue) -> String? {
        do {
            _ = try read(value, context: "response")
            return nil
        } catch {
            return error.detail
        }
    }

    /// Reads `value`, the `data.response` member.
    static func read(_ value: JSONValue?, context: String) throws(FieldError) -> OpenID4VPResponse {
        guard let object = value?.objectValue else {
            throw FieldError("\(context) is not an object of response (dc_api.jwt), vp_token (dc_api) or error")
        }
        if let error = object["error"] {
            guard let code = error.stringValue, !code.isEmpty else { throw FieldError("\(context).error is not a non-empty string") }
            for key in object.keys where !["error", "error_description", "error_uri", "state"].contains(key) {
                throw FieldError("\(context) holds an error and \(object.count - 1) other members")
            }
            return .walletError(code: walletErrorCode(code))
        }
        guard object.count == 1 else { throw FieldError("\(context) has one member: response (dc_api.jwt) or vp_token (dc_api)") }
        if let response = object["response"] {
            guard let text = response.stringValue, !text.isEmpty, text.utf8.count <= maxCompactBytes else {
                throw FieldError("\(context).response is not a compact JWE string")
            }
            return .encrypted(text)
        }
        if let token = object["vp_token"] {
            guard let vpToken = token.objectValue else { throw FieldError("\(context).vp_token is not an object") }
            return .unencrypted(vpToken)
        }
        throw FieldError("\(context) has one member: response (dc_api.jwt) or vp_token (dc_api)")
    }

    /// The wallet's error code as an outcome may quote it: an OAuth-style
    /// token of at most 64 characters, else `non_standard_error`.
    static func walletErrorCode(_ code: String) -> String {
        let allowed = code.utf8.allSatisfy { isTokenByte($0) || $0 == UInt8(ascii: ".") }
        return allowed && (1...64).contains(code.utf8.count) ? code : "non_standard_error"
    }
}

/// `vp_token` (OpenID4VP 1.0 §8.1, Appendix B.2.6): one member per credential
/// query id, each an array of presentations; an mdoc presentation is a
/// base64url DeviceResponse. Veridoc's queries ask one credential once, so
/// exactly one id with exactly one presentation is accepted, and that id must
/// be the query's where the event names it.
public enum VPToken {
    public enum Problem: Error, Sendable, Equatable {
        /// Not a vp_token of one credential and one presentation (more than
        /// the query asked for included), or not a decrypted response at all.
        case malformed(String)
        /// The decrypted response is the wallet's error response, with its code.
        case walletError(String)
    }

    /// The DeviceResponse bytes `token` carries.
    public static func deviceResponse(in token: JSONObject, credentialQueryID: String?) -> Result<[UInt8], Problem> {
        guard let member = token.members.first else { return .failure(.malformed("vp_token holds no credential")) }
        guard token.count == 1 else { return .failure(.malformed("vp_token answers \(token.count) credential queries; the request made one")) }
        // Compared by bytes, as JSON keys are: the wallet keys its answer by the id the query gave.
        if let credentialQueryID, !member.key.utf8.elementsEqual(credentialQueryID.utf8) {
            return .failure(.malformed("vp_token answers a credential query other than the request's credentialQueryId"))
        }
        guard let presentations = member.value.arrayValue else {
            return .failure(.malformed("vp_token's entry is not an array of presentations (OpenID4VP 1.0)"))
        }
        guard presentations.count == 1 else {
            return .failure(.malformed(presentations.isEmpty ? "vp_token's entry holds no presentation"
                                                             : "vp_token's entry holds \(presentations.count) presentations; the request asked one"))
        }
        guard let text = presentations[0].stringValue, let bytes = Base64.decodeURL(text), !bytes.isEmpty else {
            return .failure(.malformed("vp_token's presentation is not a base64url DeviceResponse"))
        }
        return .success(bytes)
    }

    /// The DeviceResponse in a decrypted `dc_api.jwt` payload (`{"vp_token": {...}}`),
    /// or the wallet's error when the payload is an error response.
    public static func deviceResponse(decrypted bytes: [UInt8], credentialQueryID: String?) -> Result<[UInt8], Problem> {
        guard let object = try? JSONParser(maxDepth: 8, maxMembers: 16).parse(bytes).objectValue else {
            return .failure(.malformed("the decrypted response is not a JSON object of at most 16 members"))
        }
        if let error = object["error"] {
            return .failure(.walletError(OpenID4VPResponse.walletErrorCode(error.stringValue ?? "")))
        }
        guard let token = object["vp_token"]?.objectValue else { return .failure(.malformed("the decrypted response has no vp_token object")) }
        // `state` is not used over the DC API; anything else is not an authorization response.
        for key in object.keys where key != "vp_token" && key != "state" {
            return .failure(.malformed("the decrypted response has members other than vp_token"))
        }
        return deviceResponse(in: token, credentialQueryID: credentialQueryID)
    }
}
