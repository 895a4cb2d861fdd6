import CBOR
import Crypto

/// COSE_Key (RFC 9052 §7) for the key types ISO 18013-5 uses: EC2 on P-256/384/521 and OKP Ed25519.
public enum COSEKey {
    static let keyType: Int64 = 1
    static let algorithm: Int64 = 3
    static let curve: Int64 = -1
    static let x: Int64 = -2
    static let y: Int64 = -3
    static let ec2: Int64 = 2
    static let okp: Int64 = 1
    static let ed25519: Int64 = 6

    public static func publicKey(from item: CBORItem, context: String) throws(MDocError) -> PublicKey {
        guard item.entries != nil else { throw .malformed("\(context): COSE_Key is not a map") }
        guard let type = item[label: keyType]?.int, let curveValue = item[label: curve]?.int else {
            throw .malformed("\(context): COSE_Key without kty or crv")
        }
        do {
            switch type {
            case ec2:
                guard let curve = Curve(coseIdentifier: Int(curveValue)) else { throw MDocError.unsupported("\(context): EC2 curve \(curveValue)") }
                guard let xBytes = item[label: x]?.bytes, let yBytes = item[label: y]?.bytes else {
                    // A compressed point (y as bool) is legal COSE but no wallet sends one.
                    throw MDocError.unsupported("\(context): EC2 key without both coordinates")
                }
                return try PublicKey(curve: curve, x: Array(xBytes), y: Array(yBytes))
            case okp:
                guard curveValue == ed25519 else { throw MDocError.unsupported("\(context): OKP curve \(curveValue)") }
                guard let xBytes = item[label: x]?.bytes else { throw MDocError.malformed("\(context): OKP key without x") }
                return try PublicKey(ed25519: Array(xBytes))
            default:
                throw MDocError.unsupported("\(context): COSE key type \(type)")
            }
        } catch let error as MDocError {
            throw error
        } catch {
            throw .malformed("\(context): COSE_Key is not a valid public key")
        }
    }

    /// The key's `alg` (label 3), nil when absent. RFC 9052 §7.1: a key that
    /// names an algorithm may be used with that algorithm only.
    public static func declaredAlgorithm(of item: CBORItem, context: String) throws(MDocError) -> Int64? {
        guard let value = item[label: algorithm] else { return nil }
        guard let number = value.int else { throw .malformed("\(context): COSE_Key alg is not an integer") }
        return number
    }

    public static func encode(_ key: PublicKey) -> CBOR {
        switch key.type {
        case .ec(let curve):
            let point = key.uncompressedPoint ?? []
            let size = curve.coordinateByteCount
            return .map([
                .init(.int(keyType), .int(ec2)), .init(.int(COSEKey.curve), .int(Int64(curve.coseIdentifier))),
                .init(.int(x), .bytes(Array(point.dropFirst().prefix(size)))), .init(.int(y), .bytes(Array(point.suffix(size)))),
            ])
        case .ed25519:
            return .map([
                .init(.int(keyType), .int(okp)), .init(.int(curve), .int(ed25519)), .init(.int(x), .bytes(key.ed25519Raw ?? [])),
            ])
        }
    }
}
