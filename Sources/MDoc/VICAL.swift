import CBOR
import Crypto
import Foundation

/// A Verified Issuer Certificate Authority List (ISO/IEC 18013-5 2nd ed. /
/// AAMVA): a COSE_Sign1 whose payload lists IACA certificates. It is trusted
/// only after its signature verifies with a signer that chains to the list's
/// own anchors; then its certificates become trust anchors for documents.
public struct VICAL: Sendable {
    public let provider: String
    public let date: Date?
    public let issueID: Int64?
    public let nextUpdate: Date?
    public let entries: [Entry]

    public struct Entry: Sendable {
        public let certificate: Certificate
        /// The docTypes the IACA is a trust point for (`certificateInfos[].docType`);
        /// nil when the entry names none, and then it is trusted for every docType.
        public let docTypes: [String]?
    }

    public enum Failure: Error, Equatable, Sendable {
        case malformed(String)
        case untrusted(String)
        case signatureInvalid(String)
    }

    /// Parses and authenticates `bytes` against `anchors` at `time`.
    public init(bytes: [UInt8], anchors: TrustStore, at time: Date) throws(Failure) {
        let message: COSESign1
        let payloadItem: CBORItem
        do {
            let item = try CBORDecoder(limits: .init(maxItems: 1_000_000)).decode(bytes)
            message = try COSESign1(item, context: "VICAL")
            guard let payload = message.payload else { throw MDocError.malformed("VICAL has no payload") }
            payloadItem = try CBORDecoder(limits: .init(maxItems: 1_000_000)).decode(payload)
        } catch let error as MDocError {
            throw .malformed(error.detail)
        } catch let error as CBORError {
            throw .malformed(describe(error))
        } catch {
            throw .malformed("VICAL is not a COSE_Sign1")
        }

        let chain: [Certificate]
        let algorithm: COSESignatureAlgorithm
        do {
            chain = try message.x5chain(context: "VICAL")
            algorithm = try message.algorithm(context: "VICAL")
        } catch {
            throw .malformed(error.detail)
        }
        guard let signer = chain.first else { throw .untrusted("VICAL carries no signer certificate") }
        if case .failure(let failure) = anchors.validate(leaf: signer, intermediates: Array(chain.dropFirst()), at: time) {
            throw .untrusted("VICAL signer: \(failure.detail)")
        }
        guard let key = try? signer.publicKey(), message.isValidSignature(algorithm: algorithm, key: key) else {
            throw .signatureInvalid("VICAL signature does not verify with its signer certificate")
        }

        provider = payloadItem["vicalProvider"]?.text ?? ""
        issueID = payloadItem["vicalIssueID"]?.int
        date = Self.date(payloadItem["date"])
        // A nextUpdate that is there but unreadable must not read as "never stale".
        if let item = payloadItem["nextUpdate"] {
            guard let next = Self.date(item) else { throw .malformed("VICAL nextUpdate is not a date-time") }
            nextUpdate = next
        } else {
            nextUpdate = nil
        }
        guard let infos = payloadItem["certificateInfos"]?.array else { throw .malformed("VICAL has no certificateInfos") }
        var entries: [Entry] = []
        for (index, info) in infos.enumerated() {
            guard let der = info["certificate"]?.bytes, let certificate = try? Certificate(der: der) else {
                throw .malformed("VICAL certificateInfos[\(index)] has no DER certificate")
            }
            // A list that is there but empty or not all text must not read as
            // "no restriction": the entry is refused, not widened.
            var docTypes: [String]?
            if let item = info["docType"] {
                guard let list = item.array, !list.isEmpty else {
                    throw .malformed("VICAL certificateInfos[\(index)].docType is not a non-empty array")
                }
                var names: [String] = []
                names.reserveCapacity(list.count)
                for name in list {
                    guard let text = name.text else { throw .malformed("VICAL certificateInfos[\(index)].docType holds a non-text item") }
                    names.append(text)
                }
                docTypes = names
            }
            entries.append(Entry(certificate: certificate, docTypes: docTypes))
        }
        self.entries = entries
    }

    private static func date(_ item: CBORItem?) -> Date? {
        guard let item else { return nil }
        let text = item.tagged.flatMap { $0.item.text } ?? item.text
        return text.flatMap(RFC3339.date(from:))
    }
}
