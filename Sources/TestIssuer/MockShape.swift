import CBOR
import Crypto
import MDoc
import Verification

extension TestIssuer {
    /// The mock responses of Apple's test conditions, built by Veridoc's own
    /// issuer in their published shapes (Apple's exact bytes are not public):
    /// `EventOptions.mockShape`.
    public enum MockShape: String, Sendable, CaseIterable {
        /// The Simulator: apple-wallet-app only, sealed to the merchant's key
        /// with the merchant's team ID (which must be
        /// `PassKit_Identity_Test_Team_ID`); issuer and device signatures all
        /// zero bytes, no x5chain.
        case simulator
        /// A developer profile: a real device signature, the issuer
        /// signature made by the factory's authority (the test tenant's test root).
        case developerProfile
        /// A developer profile whose issuer signature is zero bytes (the x5chain kept).
        case developerProfileWithoutIssuerSignature

        /// The kind a test tenant classifies the shape as.
        public var kind: TestKind {
            self == .simulator ? .simulator : .developerProfile
        }
    }
}

extension TestIssuer.IssuedDocument {
    /// issuerAuth with its signature replaced by as many zero bytes, and
    /// without its x5chain header when `removingCertificate`.
    public func zeroingIssuerSignature(removingCertificate: Bool) -> TestIssuer.IssuedDocument {
        var copy = self
        copy.issuerAuth = issuerAuth.mappingCOSEPart(3, zeroed).mappingCOSEPart(1) { header in
            guard removingCertificate, case .map(let entries) = header else { return header }
            return .map(entries.filter { $0.key != 33 })
        }
        return copy
    }
}

extension TestIssuer {
    /// A presented document (`Holder.present`) with its deviceSignature's signature replaced by as many zero bytes.
    static func zeroingDeviceSignature(_ document: CBOR) -> CBOR {
        guard let deviceSigned = document["deviceSigned"], let deviceAuth = deviceSigned["deviceAuth"],
              let signature = deviceAuth["deviceSignature"] else { return document }
        let auth = deviceAuth.replacing("deviceSignature", with: signature.mappingCOSEPart(3, zeroed))
        return document.replacing("deviceSigned", with: deviceSigned.replacing("deviceAuth", with: auth))
    }
}

private func zeroed(_ part: CBOR) -> CBOR {
    guard case .bytes(let bytes) = part else { return part }
    return .bytes([UInt8](repeating: 0, count: bytes.count))
}
