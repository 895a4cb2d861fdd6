import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import Settings

/// Who signs a tenant's OpenID4VP request objects (`openid4vp-v1-signed`):
/// the P-256 key its X.509 leaf certifies, the chain that goes in `x5c`, and
/// the `client_id` the chain stands for.
public struct OpenID4VPVerifierIdentity: CertifiedSigner {
    public let key: PrivateKey
    /// DER, leaf first.
    public let certificates: [[UInt8]]
    /// `x509_san_dns:<dNSName>` or `x509_hash:<base64url SHA-256(leaf)>` (OpenID4VP 1.0 §5.9.3).
    public let clientID: String
    /// The leaf's subjectAltName dNSNames, lowercased: with `x509_san_dns`,
    /// the names a wallet may hold the page's origin to.
    public let dnsNames: [String]
    public let notBefore: Date?
    public let notAfter: Date?

    public init(key: PrivateKey, certificates: [Certificate], prefix: TenantSettings.OpenID4VPVerifier.ClientIDPrefix,
                setting: String) throws(ConfigError) {
        guard let leaf = certificates.first else { throw ConfigError("\(setting).certificates: no certificate") }
        // Leaf first, each certificate followed by its issuer: a wallet builds the path from x5c in that order.
        for index in certificates.indices.dropFirst() where certificates[index - 1].issuer != certificates[index].subject {
            throw ConfigError("\(setting).certificates: certificate \(index + 1) did not issue certificate \(index) (leaf first, each followed by its issuer)")
        }
        var chain = certificates
        // The trust anchor stays out of x5c (HAIP): the wallet has it, or must not be handed it.
        if chain.count > 1, let last = chain.last, last.subject == last.issuer { chain.removeLast() }
        dnsNames = ((try? leaf.dnsNames()) ?? []).map { $0.lowercased() }
        switch prefix {
        case .x509SanDNS:
            guard let name = (try? leaf.dnsNames())?.first else {
                throw ConfigError("\(setting).certificates: x509_san_dns needs a leaf with a subjectAltName dNSName")
            }
            clientID = "x509_san_dns:" + name
        case .x509Hash:
            clientID = "x509_hash:" + Base64.encodeURL(sha256(leaf.der))
        }
        self.key = key
        self.certificates = chain.map(\.der)
        // The chain is only as good as its soonest-ending certificate, the anchor's included.
        notBefore = certificates.map(\.notBefore).max()
        notAfter = certificates.map(\.notAfter).min()
    }
}

/// The OpenID4VP 1.0 request a web session hands `navigator.credentials.get`
/// (Appendix A.2 and A.3): a DCQL query for one mdoc of the session's docType
/// and elements, `response_mode` `dc_api.jwt`, and `client_metadata` naming
/// the session's own encryption key (`IssuedNonce.Key.responseKey`). Signed
/// by the tenant's verifier identity, it also names the verifier
/// (`client_id`) and the origins it may be used from (`expected_origins`).
public enum OpenID4VPRequest {
    /// The DCQL credential query id, which the wallet's `vp_token` is keyed by.
    public static let credentialQueryID = "mdoc"
    public static let unsignedProtocol = "openid4vp-v1-unsigned"
    public static let signedProtocol = "openid4vp-v1-signed"
    /// The JWS `typ` of a request object (RFC 9101 §10.8).
    static let requestObjectType = "oauth-authz-req+jwt"

    /// `{"protocol", "data"}`: one entry of the Digital Credentials API's `requests`.
    public static func credentialRequest(nonce: String, responseKey: PublicKey, docType: String, elements: [RequestedElement],
                                         signer: OpenID4VPVerifierIdentity?, expectedOrigins: [String]) throws(CryptoError) -> JSONObject {
        var object = requestObject(nonce: nonce, responseKey: responseKey, docType: docType, elements: elements)
        guard let signer else { return ["protocol": .string(unsignedProtocol), "data": .object(object)] }
        _ = object.append("client_id", .string(signer.clientID))
        _ = object.append("expected_origins", .array(expectedOrigins.sorted().map(JSONValue.string)))
        let header: JSONObject = [
            "alg": "ES256", "typ": .string(requestObjectType),
            "x5c": .array(signer.certificates.map { .string(Base64.encodeStandard($0)) }),
        ]
        let jws = try CompactJWS.signES256(header: header, payload: JSONValue.object(object).jsonBytes(keyOrder: .insertion), key: signer.key)
        return ["protocol": .string(signedProtocol), "data": ["request": .string(jws)]]
    }

    /// The request's parameters, without `client_id` (an unsigned request has none).
    static func requestObject(nonce: String, responseKey: PublicKey, docType: String, elements: [RequestedElement]) -> JSONObject {
        let thumbprint = ECJWK.thumbprint(of: responseKey).map(Base64.encodeURL) ?? ""
        let jwk = ECJWK.object(for: responseKey, extra: [("kid", .string(thumbprint)), ("use", "enc"), ("alg", .string(CompactJWE.keyAgreement))]) ?? [:]
        let algorithms = JSONValue.array(COSESignatureAlgorithm.allCases.map { .integer(Int($0.rawValue)) })
        let metadata: JSONObject = [
            "jwks": ["keys": [.object(jwk)]],
            "encrypted_response_enc_values_supported": .array(CompactJWE.ContentEncryption.allCases.map { .string($0.rawValue) }),
            "vp_formats_supported": ["mso_mdoc": ["issuerauth_alg_values": algorithms, "deviceauth_alg_values": algorithms]],
        ]
        return [
            "response_type": "vp_token", "response_mode": "dc_api.jwt", "nonce": .string(nonce),
            "dcql_query": dcql(docType: docType, elements: elements), "client_metadata": .object(metadata),
        ]
    }

    /// One mso_mdoc credential query: its docType, and a claim per element
    /// with `intent_to_retain` true for what may be stored.
    public static func dcql(docType: String, elements: [RequestedElement]) -> JSONValue {
        let claims = elements.map { element -> JSONValue in
            let retain = if case .mayStore = element.retention { true } else { false }
            return ["path": [.string(element.namespace), .string(element.element)], "intent_to_retain": .bool(retain)]
        }
        return ["credentials": [["id": .string(credentialQueryID), "format": "mso_mdoc", "meta": ["doctype_value": .string(docType)],
                                 "claims": .array(claims)]]]
    }
}
