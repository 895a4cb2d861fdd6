import CCurl

/// A URL parsed by curl's own URL parser and checked against the policy.
/// The transfer is given curl's normalised form of what was checked, so a
/// second parser never reads an odd URL (backslashes, stray `@`, odd ports,
/// numeric hosts) differently from the check.
struct FetchURL {
    /// curl's normalised form: what CURLOPT_URL is set to, and what `finalURL` reports.
    let normalized: String
    let scheme: String
    /// Lowercased host (IPv6 in brackets) and port, the default one filled in: the per-host limiter's key.
    let hostKey: String

    /// No status list URL comes near this; a longer one is not worth parsing.
    static let maxLength = 8 << 10

    /// Parses `text` (the request's URL, or where a redirect points) and
    /// applies the policy's scheme rule and the no-credentials rule.
    static func check(_ text: String, policy: FetchPolicy, isRedirect: Bool) -> Result<FetchURL, FetchError> {
        guard !text.isEmpty, text.utf8.count <= maxLength, !text.utf8.contains(0) else { return .failure(.malformedURL) }
        guard let handle = curl_url() else { return .failure(.other("CURLE_OUT_OF_MEMORY")) }
        defer { curl_url_cleanup(handle) }
        return check(text, handle: handle, policy: policy, isRedirect: isRedirect)
    }

    private static func check(_ text: String, handle: OpaquePointer, policy: FetchPolicy, isRedirect: Bool) -> Result<FetchURL, FetchError> {
        // Any scheme is parsed, so that a refused one is reported as such rather than as malformed.
        guard curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
              let scheme = part(handle, CURLUPART_SCHEME)?.lowercased()
        else { return .failure(.malformedURL) }
        guard policy.permitsScheme(scheme) else {
            if isRedirect && scheme == "http" { return .failure(.redirectInsecure("http")) }
            return .failure(.refusedScheme(FetchError.schemeForDetail(scheme)))
        }
        // Credentials in a URL from a credential are someone else's, or bait;
        // none are ever sent.
        guard part(handle, CURLUPART_USER) == nil, part(handle, CURLUPART_PASSWORD) == nil else { return .failure(.refusedCredentials) }
        guard let host = part(handle, CURLUPART_HOST), !host.isEmpty,
              let port = part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)),
              let normalized = part(handle, CURLUPART_URL)
        else { return .failure(.malformedURL) }
        return .success(FetchURL(normalized: normalized, scheme: scheme, hostKey: host.lowercased() + ":" + port))
    }

    /// One part of a parsed URL, or nil when it has none.
    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32 = 0) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &pointer, flags) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }
}
