/// Requests a strict HTTP/1.1 server refuses with 400: each pair is a name
/// and the request's bytes, for a GET-able `path` (it begins with "/").
public enum StrictHTTPCases {
    public static func all(path: String, authorization: String = "Bearer x") -> [(String, String)] {
        let host = "Host: 127.0.0.1\r\nConnection: close\r\n"
        return [
            ("two Content-Length", "POST \(path) HTTP/1.1\r\n\(host)Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
            ("conflicting Content-Length", "POST \(path) HTTP/1.1\r\n\(host)Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}"),
            ("Content-Length and Transfer-Encoding", "POST \(path) HTTP/1.1\r\n\(host)Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
            ("two Transfer-Encoding", "POST \(path) HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
            ("two Authorization", "GET \(path) HTTP/1.1\r\n\(host)Authorization: \(authorization)\r\nAuthorization: \(authorization)\r\n\r\n"),
            ("%00 in the path", "GET \(path)%00 HTTP/1.1\r\n\(host)\r\n"),
            ("%00 in the query", "GET \(path)?a=%00 HTTP/1.1\r\n\(host)\r\n"),
            ("NUL in the path", "GET \(path)\u{0}x HTTP/1.1\r\n\(host)\r\n"),
            ("a . segment", "GET /.\(path) HTTP/1.1\r\n\(host)\r\n"),
            ("a .. segment", "GET /x/..\(path) HTTP/1.1\r\n\(host)\r\n"),
            ("a %2e%2e segment", "GET /x/%2e%2e\(path) HTTP/1.1\r\n\(host)\r\n"),
            ("a .%2E segment", "GET /x/.%2E\(path) HTTP/1.1\r\n\(host)\r\n"),
            ("a %2e segment", "GET %2e\(path) HTTP/1.1\r\n\(host)\r\n"),
            ("a trailing ..", "GET \(path)/.. HTTP/1.1\r\n\(host)\r\n"),
        ]
    }
}
