import Crypto
import Foundation

extension TestIssuer {
    /// PEM text for the files a config directory holds. Crypto writes keys;
    /// certificates only ever needed reading there, so writing lives here.
    public enum PEM {
        /// One `CERTIFICATE` block per certificate, 64-column base64 (RFC 7468).
        public static func certificates(_ certificates: [Certificate]) -> String {
            certificates.map { block("CERTIFICATE", $0.der) }.joined()
        }

        public static func block(_ label: String, _ der: [UInt8]) -> String {
            let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
        }

        /// The DER inside the first block of `pem` (e.g. PKCS#8 from `PrivateKey.pkcs8PEM()`),
        /// for fields that carry a key as DER, such as `ephemeralReaderKey`.
        public static func der(fromPEM pem: String) throws -> [UInt8] {
            let lines = pem.split(whereSeparator: \.isNewline)
            guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") }),
                  let end = lines[begin...].firstIndex(where: { $0.hasPrefix("-----END ") }),
                  let der = Data(base64Encoded: lines[(begin + 1)..<end].joined())
            else { throw FixtureError("not a PEM block") }
            return Array(der)
        }
    }
}
