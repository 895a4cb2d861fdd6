import Crypto
import JSON

/// A P-256 public key as a JSON Web Key (RFC 7517, RFC 7518 §6.2): how
/// OpenID4VP names the key a response is encrypted to (`client_metadata.jwks`),
/// and how a JWE names its sender's ephemeral key (`epk`).
public enum ECJWK {
    /// The key in `object`, which holds `kty` "EC", `crv` "P-256", `x` and `y`
    /// (32 bytes each, base64url without padding), and otherwise only members
    /// named in `allowing`. A private member (`d`) is refused: a sender that
    /// puts its private key in a header has not understood what it is doing.
    public static func publicKey(from object: JSONObject, context: String, allowing allowed: Set<String> = []) throws(JOSEError) -> PublicKey {
        for key in object.keys where !["kty", "crv", "x", "y"].contains(key) && !allowed.contains(key) {
            throw .unsupported(key == "d" ? "\(context) carries a private key (d)" : "\(context) has a member this key form does not take")
        }
        guard object["kty"]?.stringValue == "EC" else { throw .unsupported("\(context).kty is not EC") }
        guard object["crv"]?.stringValue == "P-256" else { throw .unsupported("\(context).crv is not P-256") }
        guard let x = object["x"]?.stringValue.flatMap(Base64.decodeURLUnpadded), x.count == 32,
              let y = object["y"]?.stringValue.flatMap(Base64.decodeURLUnpadded), y.count == 32
        else { throw .malformed("\(context).x and .y are not 32-byte base64url coordinates") }
        do {
            return try PublicKey(curve: .p256, x: x, y: y)
        } catch {
            throw .malformed("\(context) is not a point on P-256")
        }
    }

    /// `key`'s coordinates, base64url without padding.
    static func coordinates(of key: PublicKey) -> (x: String, y: String)? {
        guard key.curve == .p256, let point = key.uncompressedPoint, point.count == 65 else { return nil }
        return (Base64.encodeURL(point[1..<33]), Base64.encodeURL(point[33...]))
    }

    /// `{"kty", "crv", "x", "y"}` followed by `extra` members in their order
    /// (`kid`, `alg`, `use` for OpenID4VP's `jwks`); nil for a key that is not P-256.
    public static func object(for key: PublicKey, extra: [(String, JSONValue)] = []) -> JSONObject? {
        guard let (x, y) = coordinates(of: key) else { return nil }
        var object: JSONObject = ["kty": "EC", "crv": "P-256", "x": .string(x), "y": .string(y)]
        for (name, value) in extra { _ = object.append(name, value) }
        return object
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in
    /// lexicographic order, without whitespace. OpenID4VP binds the response
    /// key into the session transcript with it, and Veridoc names keys by it.
    public static func thumbprint(of key: PublicKey) -> [UInt8]? {
        guard let (x, y) = coordinates(of: key) else { return nil }
        return sha256(Array(#"{"crv":"P-256","kty":"EC","x":""#.utf8) + Array(x.utf8) + Array(#"","y":""#.utf8) + Array(y.utf8) + Array(#""}"#.utf8))
    }
}
