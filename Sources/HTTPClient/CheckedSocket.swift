import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// What a curl open-socket callback returns: a socket for a connection to
/// an address the caller's rule permits (4 or 16 bytes, network order), or
/// CURL_SOCKET_BAD. Judging the address curl is about to connect to, not the
/// host name, is what makes a rule hold against DNS answers that change.
public enum CheckedSocket {
    /// `refused`: the rule (or the socket's purpose) said no; a failed `socket` call is not a refusal.
    public static func open(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>,
                            permits: ([UInt8]) -> Bool) -> (socket: curl_socket_t, refused: Bool) {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = Int(veridoc_curl_sockaddr_ip(address, &bytes))
        guard purpose == CURLSOCKTYPE_IPCXN, count == 4 || count == 16, permits(Array(bytes.prefix(count))) else {
            return (CURL_SOCKET_BAD, true)
        }
        // Close-on-exec, as curl's own socket would be: a process the server starts must not inherit a connection.
        let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
        return (descriptor >= 0 ? descriptor : CURL_SOCKET_BAD, false)
    }
}
