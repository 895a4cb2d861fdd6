import Crypto
import Foundation
import JOSE
import JSON
import Verification

extension TestIssuer.EventFactory {
    /// What a wallet hands back for one OpenID4VP request made for the
    /// Digital Credentials API (`{"protocol", "data"}`, signed or not), from
    /// `origin`: the credential's `data`, `{"response": <compact JWE>}`,
    /// disclosing the query's claims and sealed to the request's key. A
    /// signed request is checked first as a wallet would: its JWS verifies
    /// with the `x5c` leaf, and its `expected_origins` include `origin`
    /// (unless `checkingOrigins` is false: a wallet that does not, for tests
    /// of what the verifier makes of an answer bound to another origin).
    /// `disclosing` replaces the query's claims with these; `fault` issues the document with that defect.
    public mutating func walletAnswer(openID4VPRequest request: JSONObject, origin: String, checkingOrigins: Bool = true,
                                      disclosing chosen: [RequestedElement]? = nil, fault: TestIssuer.Fault? = nil) throws -> JSONObject {
        guard let data = request["data"]?.objectValue else { throw TestIssuer.FixtureError("the request has no data object") }
        let parameters: JSONObject
        switch request["protocol"]?.stringValue {
        case OpenID4VPRequest.unsignedProtocol?:
            parameters = data
        case OpenID4VPRequest.signedProtocol?:
            parameters = try Self.verifiedRequestObject(data["request"]?.stringValue ?? "")
            guard !checkingOrigins || parameters["expected_origins"]?.arrayValue?.contains(.string(origin)) == true else {
                throw TestIssuer.FixtureError("the signed request does not name \(origin) among its expected_origins")
            }
        default:
            throw TestIssuer.FixtureError("not an OpenID4VP request")
        }
        guard parameters["response_mode"]?.stringValue == "dc_api.jwt", let nonce = parameters["nonce"]?.stringValue,
              let jwk = parameters["client_metadata"]?["jwks"]?["keys"]?.arrayValue?.first?.objectValue,
              let credential = parameters["dcql_query"]?["credentials"]?.arrayValue?.first?.objectValue,
              let queryID = credential["id"]?.stringValue
        else { throw TestIssuer.FixtureError("the request lacks response_mode dc_api.jwt, a nonce, a key or a credential query") }
        let key = try ECJWK.publicKey(from: jwk, context: "jwks.keys[0]", allowing: ["kid", "use", "alg"])
        let claims = (credential["claims"]?.arrayValue ?? []).compactMap { claim -> RequestedElement? in
            guard let path = claim["path"]?.arrayValue, path.count == 2, let namespace = path[0].stringValue, let element = path[1].stringValue else { return nil }
            return RequestedElement(namespace: namespace, element: element, retention: .willNotStore)
        }
        let jwe = try walletAnswer(openID4VPNonce: nonce, origin: origin, responseKey: key, keyID: jwk["kid"]?.stringValue, disclosing: chosen ?? claims,
                                   credentialQueryID: queryID, fault: fault)
        return ["response": .string(jwe)]
    }

    /// The payload of a request object JWS whose ES256 signature verifies with its `x5c` leaf.
    static func verifiedRequestObject(_ compact: String) throws -> JSONObject {
        let segments = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard segments.count == 3, let headerBytes = Base64.decodeURLUnpadded(segments[0]), let payloadBytes = Base64.decodeURLUnpadded(segments[1]),
              let signature = Base64.decodeURLUnpadded(segments[2]),
              let header = try JSONParser().parse(headerBytes).objectValue, header["alg"]?.stringValue == "ES256",
              let leafText = header["x5c"]?.arrayValue?.first?.stringValue, let leafDER = Base64.decodeStandard(leafText)
        else { throw TestIssuer.FixtureError("the request is not a compact ES256 JWS with x5c") }
        let leaf = try Certificate(der: leafDER)
        guard try leaf.publicKey().isValidSignature(signature, for: Array((segments[0] + "." + segments[1]).utf8), hash: .sha256) else {
            throw TestIssuer.FixtureError("the request object's signature does not verify with its x5c leaf")
        }
        guard let payload = try JSONParser().parse(payloadBytes).objectValue else { throw TestIssuer.FixtureError("the request object is not a JSON object") }
        return payload
    }
}
