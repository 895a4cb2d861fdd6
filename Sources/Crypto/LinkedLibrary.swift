import COpenSSL

/// The libcrypto this process runs with (not the headers it was built against).
public enum OpenSSLLibrary {
    public static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
