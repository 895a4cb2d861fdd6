import CCurl

/// The options both HTTP clients (this module's, for webhooks and metadata,
/// and the status-list fetcher) set on every transfer: kept in one place so
/// that neither drifts from the other on what keeps a connection safe.
package enum CurlOptions {
    /// Safe whatever the URL says: no signals (transfers run on many
    /// threads); no proxy from http_proxy or https_proxy (the address rule is
    /// about where the connection goes); only `protocols`, whatever scheme
    /// slipped past the URL check; no redirect followed by curl (each caller
    /// decides); the peer's certificate and name verified, against `caFile`
    /// alone when one is given (no CA directory besides it).
    package static func safety(_ easy: UnsafeMutableRawPointer, protocols: String, caFile: String?) -> [CURLcode] {
        var codes = [
            veridoc_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1),
            veridoc_curl_setopt_string(easy, CURLOPT_PROXY, ""),
            veridoc_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, protocols),
            veridoc_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, protocols),
            veridoc_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0),
            veridoc_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
            veridoc_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
            veridoc_curl_setopt_long(easy, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2),
        ]
        if let caFile {
            codes.append(veridoc_curl_setopt_string(easy, CURLOPT_CAINFO, caFile))
            codes.append(veridoc_curl_setopt_string(easy, CURLOPT_CAPATH, nil))
        }
        return codes
    }

    /// Where the body and the headers go, and who opens each socket (the
    /// caller's address check): each callback gets `context`.
    package static func callbacks(_ easy: UnsafeMutableRawPointer, body: curl_write_callback, header: curl_write_callback,
                                  openSocket: curl_opensocket_callback, context: UnsafeMutableRawPointer) -> [CURLcode] {
        [
            veridoc_curl_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, body),
            veridoc_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context),
            veridoc_curl_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, header),
            veridoc_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context),
            veridoc_curl_setopt_opensocket(easy, openSocket),
            veridoc_curl_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context),
        ]
    }
}
