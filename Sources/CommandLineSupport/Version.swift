import Crypto
import HTTPService
import Kafka
import Postgres

/// `veridoc --version` and `veridoc-dev --version`: the product's version
/// (the Helm chart's appVersion says the same; ProductBinaryTests hold them
/// together), shared so the tooling never claims another, and the C
/// libraries the binary is linked with, as they report themselves at run time.
public enum Version {
    public static let veridoc = "0.1.0"

    /// `binary`'s first line, then one line per linked library.
    public static func text(of binary: String) -> String {
        (["\(binary) \(veridoc)"] + [OpenSSLLibrary.version, RdKafkaLibrary.version, LibPQLibrary.version, MicroHTTPDLibrary.version]
            .map { "  " + $0 }).joined(separator: "\n")
    }
}
