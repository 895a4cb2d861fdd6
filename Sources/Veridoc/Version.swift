import Crypto
import HTTPService
import Kafka
import Postgres

/// `veridoc --version`: the product's version (the Helm chart's appVersion
/// says the same; ProductBinaryTests hold them together) and the C libraries
/// it is linked with, as they report themselves at run time.
enum Version {
    static let veridoc = "0.1.0"

    static var text: String {
        (["veridoc \(veridoc)"] + [OpenSSLLibrary.version, RdKafkaLibrary.version, LibPQLibrary.version, MicroHTTPDLibrary.version]
            .map { "  " + $0 }).joined(separator: "\n")
    }
}
