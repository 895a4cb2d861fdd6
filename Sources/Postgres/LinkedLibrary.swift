import CLibPQ

/// The libpq this process runs with: PQlibVersion's major·10000 + minor as "libpq 15.5".
public enum LibPQLibrary {
    public static var version: String {
        let number = Int(PQlibVersion())
        return "libpq \(number / 10_000).\(number % 10_000)"
    }
}
