import CMicroHTTPD

/// The libmicrohttpd this process runs with.
public enum MicroHTTPDLibrary {
    public static var version: String { "libmicrohttpd " + String(cString: MHD_get_version()) + (HTTPDaemon.supportsTLS ? " (TLS)" : "") }
}
