import CBOR
import Crypto

/// COSE signature algorithms Veridoc verifies (RFC 9053, RFC 9864 fully-specified ids).
public enum COSESignatureAlgorithm: Int64, Sendable, CaseIterable {
    case es256 = -7
    case es384 = -35
    case es512 = -36
    case edDSA = -8
    case esp256 = -9
    case esp384 = -51
    case esp512 = -52
    case ed25519 = -19

    public init(coseValue: Int64) throws(MDocError) {
        guard let algorithm = COSESignatureAlgorithm(rawValue: coseValue) else {
            throw .unsupported("COSE algorithm \(coseValue)")
        }
        self = algorithm
    }

    public var hash: HashAlgorithm {
        switch self {
        case .es256, .esp256, .edDSA, .ed25519: .sha256
        case .es384, .esp384: .sha384
        case .es512, .esp512: .sha512
        }
    }

    /// The only key type this algorithm may be used with. ISO 18013-5 §9.1.3.6
    /// pairs each ECDSA algorithm with one curve, so ES256 with a P-384 key is a
    /// mismatch, not a matter of taste.
    public var keyType: KeyType {
        switch self {
        case .es256, .esp256: .ec(.p256)
        case .es384, .esp384: .ec(.p384)
        case .es512, .esp512: .ec(.p521)
        case .edDSA, .ed25519: .ed25519
        }
    }

    /// The algorithm an issuer or device uses with `key` (for building fixtures).
    public static func preferred(for key: KeyType) -> COSESignatureAlgorithm {
        switch key {
        case .ec(.p256): .es256
        case .ec(.p384): .es384
        case .ec(.p521): .es512
        case .ed25519: .edDSA
        }
    }
}

/// COSE header labels used here (RFC 9052 §3.1, RFC 9360).
enum COSEHeader {
    static let algorithm: Int64 = 1
    static let critical: Int64 = 2
    static let x5chain: Int64 = 33

    /// The labels this verifier acts on, so the only ones a `crit` may name.
    static let understood: [Int64] = [algorithm, x5chain]

    /// RFC 9052 §3.1: `crit` lists protected header parameters the recipient
    /// must understand, or reject the message. It must itself be protected
    /// and hold at least one label; each label it names must be one this
    /// verifier acts on and be present in the protected header.
    static func checkCritical(protected: CBORItem?, unprotected: CBORItem?, context: String) throws(MDocError) {
        if unprotected?[label: critical] != nil {
            throw .malformed("\(context): crit is in the unprotected header; it must be protected")
        }
        guard let list = protected?[label: critical] else { return }
        guard let labels = list.array, !labels.isEmpty else {
            throw .malformed("\(context): crit is not a non-empty array of labels")
        }
        for label in labels {
            guard let number = label.int, understood.contains(number) else {
                throw .malformed("\(context): crit names a header parameter this verifier does not understand")
            }
            guard protected?[label: number] != nil else {
                throw .malformed("\(context): crit names header parameter \(number), which the protected header lacks")
            }
        }
    }
}
