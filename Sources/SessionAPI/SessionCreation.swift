import Crypto
import Foundation
import HTTPService
import JSON
import MDoc
import Storage
import Verification

/// `POST /v1/sessions`: a session for one flow, with what the integrator's
/// front end hands the wallet: the nonce (app), the Digital Credentials
/// request (web), or only the id the reader app reports back (iso).
enum SessionCreation {
    static let maxElements = 100
    static let defaultDocType = "org.iso.18013.5.1.mDL"

    /// The body, read strictly.
    struct Request {
        var flow: Flow
        var audience: String
        var docType: String
        var elements: [RequestedElement]
        var ages: [AgeRequest]
        var ttlSeconds: Int?
        var reference: String?

        /// How long the session lasts: its `ttlSeconds`, else the tenant's longest.
        func lifetime(on tenant: Tenant) -> Int { ttlSeconds ?? tenant.maxSessionSeconds }
    }

    static func read(_ body: inout RequestBody, tenant: Tenant) throws(APIError) -> Request {
        let flowName = try body.requiredString("flow", maxBytes: 32)
        guard let flow = Flow(rawValue: flowName) else {
            throw .invalidField("flow", expected: "one of \(Flow.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let merchantID = try body.string("merchantId", maxBytes: 256)
        let origin = try body.string("origin", maxBytes: 256)
        let audience: String
        switch flow {
        case .appleWalletApp:
            guard origin == nil else { throw .unknownField("origin") }
            guard let merchantID else { throw .missingField("merchantId") }
            guard tenant.owns(merchantID: merchantID) else { throw .invalidField("merchantId", expected: "one of the tenant's merchantIds") }
            audience = merchantID
        case .appleWalletWeb, .openID4VPDCAPI:
            guard merchantID == nil else { throw .unknownField("merchantId") }
            guard let origin else { throw .missingField("origin") }
            guard tenant.owns(origin: origin) else { throw .invalidField("origin", expected: "one of the tenant's origins") }
            if flow == .appleWalletWeb {
                guard tenant.webRecipient != nil else { throw .notConfigured("encryptionKeys for apple-wallet-web") }
            } else if !tenant.makesOpenID4VPRequests {
                // An unsigned request names no verifier: a production tenant says that it means to send one.
                throw .notConfigured("openID4VPVerifier (or openID4VPUnsignedRequests) for openid4vp-dc-api")
            }
            audience = origin
        case .isoDeviceResponse:
            if merchantID != nil { throw .unknownField("merchantId") }
            if origin != nil { throw .unknownField("origin") }
            audience = ""
        }
        let docType = try body.string("docType", maxBytes: 256) ?? defaultDocType
        let elements = try body.objects("requestedElements", maxCount: maxElements) { (item: inout RequestBody) throws(APIError) in
            try element(&item)
        } ?? []
        let ages = try body.objects("ageAtLeast", maxCount: AgeRequest.maxPerRequest) { (item: inout RequestBody) throws(APIError) -> AgeRequest in
            guard let age = try item.integer("age", range: AgeAnswer.thresholds) else { throw .missingField(item.field("age")) }
            return AgeRequest(age: age, retention: try retention(&item))
        } ?? []
        if let refusal = AgeRequest.refusal(ages, with: elements) { throw .invalidField(refusal.field, expected: refusal.expected) }
        if (flow == .appleWalletWeb || flow == .openID4VPDCAPI) && elements.isEmpty && ages.isEmpty { throw .missingField("requestedElements") }
        // Each element once, as the event schema has it: two intents for one element would leave the answer to chance.
        for (index, element) in elements.enumerated()
        where elements[..<index].contains(where: { $0.namespace == element.namespace && $0.element == element.element }) {
            throw .invalidField("requestedElements[\(index)]", expected: "each namespace and element once")
        }
        if let allowlist = tenant.requestAllowlist {
            let listed = "listed in the tenant's requestableElements"
            guard allowlist.allows(docType: docType) else { throw .invalidField("docType", expected: "a docType \(listed)") }
            for (index, element) in elements.enumerated() where !allowlist.allows(element, of: docType) {
                throw .invalidField("requestedElements[\(index)]", expected: "an element of the docType \(listed)")
            }
            for (index, age) in ages.enumerated() where !allowlist.allows(age.requestedElement(docType: docType), of: docType) {
                throw .invalidField("ageAtLeast[\(index)]", expected: "an age whose age_over_NN (age_in_years from 100) is \(listed)")
            }
        }
        let ttl = try body.integer("ttlSeconds", range: 1...tenant.maxSessionSeconds)
        let reference = try body.string("reference", maxBytes: 256)
        if let reference, !reference.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) {
            throw .invalidField("reference", expected: "printable ASCII")
        }
        try body.finish()
        return Request(flow: flow, audience: audience, docType: docType, elements: elements, ages: ages, ttlSeconds: ttl, reference: reference)
    }

    private static func element(_ item: inout RequestBody) throws(APIError) -> RequestedElement {
        let namespace = try item.requiredString("namespace", maxBytes: 256)
        let element = try item.requiredString("element", maxBytes: 256)
        return RequestedElement(namespace: namespace, element: element, retention: try retention(&item))
    }

    /// An element's or an age's `retention`, required.
    private static func retention(_ item: inout RequestBody) throws(APIError) -> Retention {
        guard var retention = try item.object("retention") else { throw .missingField(item.field("retention")) }
        let intent = try retention.requiredString("intent", maxBytes: 32)
        let days = try retention.integer("days", range: 1...Retention.maximumDays)
        try retention.finish()
        switch intent {
        case "willNotStore":
            if days != nil { throw .unknownField(retention.field("days")) }
            return .willNotStore
        case "mayStore":
            return .mayStore(days: days)
        default:
            throw .invalidField(retention.field("intent"), expected: "willNotStore or mayStore")
        }
    }

    /// A session made: what the integrator's front end hands the wallet.
    struct Created {
        let id: UUID
        let flow: Flow
        let expiresAt: Date
        /// The nonce the app flow passes to PassKit.
        let nonce: [UInt8]
        /// The merchant id (app) or origin (web) the session is bound to.
        let audience: String
        /// The Digital Credentials request (web flow): base64url DeviceRequest and EncryptionInfo.
        let webRequest: (deviceRequest: String, encryptionInfo: String)?
        /// The OpenID4VP request (`{"protocol", "data"}`) for the Digital Credentials API.
        let openID4VPRequest: JSONObject?
        /// A web session's whole `navigator.credentials.get` argument: every protocol it offers, in the tenant's order.
        let credentialRequestOptions: JSONObject?
        let reference: String?
        /// An earlier creation's session, answered again for its Idempotency-Key.
        var replayed = false
    }

    /// Creates the session: its nonce, its request and its row, committed.
    /// With `idempotency`, a creation that repeats an earlier one's key and
    /// body answers that session again (`replayed`), and one that repeats
    /// only the key is refused.
    static func create(_ request: Request, tenant: String, config: Tenant, signers: SessionSigners, service: SessionService, now: Date,
                       metrics: APIMetrics, idempotency: SessionsTable.Idempotency? = nil) throws(SessionError) -> Created {
        if let idempotency, let earlier = try replay(request, tenant: tenant, config: config, signers: signers, service: service, idempotency: idempotency) {
            return earlier
        }
        let id = randomSessionID()
        let lifetime = request.lifetime(on: config)
        let binding = IssuedNonce.Binding(tenant: tenant, flow: request.flow, audience: request.audience)
        let nonce = service.nonceKey.issue(session: id, binding: binding, issuedAt: now, lifetime: UInt32(lifetime))
        let created = try answer(request, id: id, nonce: nonce, encryptionInfo: nil, tenant: tenant, config: config, signers: signers, service: service)
        let row = SessionsTable.Row(
            tenant: tenant, id: id, flow: request.flow.rawValue, audience: request.audience, docType: request.docType,
            requested: RequestedJSON.text(elements: request.elements, ages: request.ages),
            nonce: nonce.bytes, encryptionInfo: created.webRequest?.encryptionInfo, reference: request.reference,
            createdAt: nonce.issuedAt, expiresAt: nonce.expiresAt)
        if let idempotency {
            let inserted = try service.pool.with { connection in try connection.execute(SessionsTable.insert(row, idempotency: idempotency)).rowCount == 1 }
            // Another creation with the key committed between the look and the insert: it is the session.
            if !inserted {
                guard let earlier = try replay(request, tenant: tenant, config: config, signers: signers, service: service, idempotency: idempotency)
                else { throw .internalFailure }
                return earlier
            }
        } else {
            try service.writer.insert(row)
        }
        metrics.sessionsCreated.increment(request.flow.rawValue)
        return created
    }

    /// The session an earlier creation with this key made, answered again
    /// with its id, nonce and EncryptionInfo (requests signed afresh); nil
    /// when the key is new. The same key with another body is a conflict.
    private static func replay(_ request: Request, tenant: String, config: Tenant, signers: SessionSigners, service: SessionService,
                               idempotency: SessionsTable.Idempotency) throws(SessionError) -> Created? {
        let found = try service.pool.with { connection in
            SessionsTable.stored(try connection.execute(SessionsTable.find(tenant: tenant, idempotencyKey: idempotency.key)))
        }
        guard let found else { return nil }
        guard let stored = found.idempotency, constantTimeEqual(stored.requestDigest, idempotency.requestDigest) else { throw .idempotencyConflict }
        let binding = IssuedNonce.Binding(tenant: tenant, flow: request.flow, audience: request.audience)
        guard let nonce = service.nonceKey.open(found.row.nonce, binding: binding) else { throw .internalFailure }
        var created = try answer(request, id: found.row.id, nonce: nonce, encryptionInfo: found.row.encryptionInfo, tenant: tenant, config: config,
                                 signers: signers, service: service)
        created.replayed = true
        return created
    }

    /// What the integrator's front end hands the wallet for the session `id`
    /// with `nonce`: the Annex C request over `encryptionInfo` (made from the
    /// nonce when nil), the OpenID4VP request, both for a web session.
    private static func answer(_ request: Request, id: UUID, nonce: IssuedNonce, encryptionInfo: String?, tenant: String, config: Tenant,
                               signers: SessionSigners, service: SessionService) throws(SessionError) -> Created {
        var webRequest: (deviceRequest: String, encryptionInfo: String)?
        if request.flow == .appleWalletWeb, let recipient = config.webRecipient {
            let encryptionInfo = encryptionInfo ?? Base64.encodeURL(AnnexCEncryptionInfo.encode(nonce: nonce.bytes, recipient: recipient))
            let asked = request.elements + request.ages.map { $0.requestedElement(docType: request.docType) }
            let items = asked.map { element -> DeviceRequest.Item in
                let retain = if case .mayStore = element.retention { true } else { false }
                return (element.namespace, element.element, retain)
            }
            // Signed over the Annex C transcript of this very request: the
            // EncryptionInfo just made and the origin the session is bound to.
            let transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: encryptionInfo, origin: request.audience)
            guard let deviceRequest = try? DeviceRequest.encode(docType: request.docType, items: items, signer: signers.webReader, transcript: transcript)
            else { throw .internalFailure }
            webRequest = (Base64.encodeURL(deviceRequest), encryptionInfo)
        }
        var openID4VPRequest: JSONObject?
        if request.flow == .openID4VPDCAPI {
            openID4VPRequest = try Self.openID4VPRequest(request, nonce: nonce, signer: signers.openID4VPVerifier, config: config, service: service)
        }
        var credentialRequestOptions: JSONObject?
        if request.flow == .appleWalletWeb, let webRequest {
            // One request for both browsers: the OpenID4VP entry's nonce is the
            // session's under that flow, which the submit route derives again.
            var entries: [JSONValue] = []
            for offered in config.digitalCredentialsProtocols {
                switch offered {
                case .orgISOMdoc:
                    entries.append(.object(Self.annexCRequest(webRequest)))
                case .openID4VP where config.makesOpenID4VPRequests:
                    let sibling = service.nonceKey.sibling(of: nonce, binding: IssuedNonce.Binding(
                        tenant: tenant, flow: .openID4VPDCAPI, audience: request.audience))
                    entries.append(.object(try Self.openID4VPRequest(request, nonce: sibling, signer: signers.openID4VPVerifier, config: config,
                                                                     service: service)))
                case .openID4VP:
                    break
                }
            }
            credentialRequestOptions = ["digital": ["requests": .array(entries)]]
        }
        return Created(id: id, flow: request.flow, expiresAt: nonce.expiresAt, nonce: nonce.bytes, audience: request.audience,
                       webRequest: webRequest, openID4VPRequest: openID4VPRequest, credentialRequestOptions: credentialRequestOptions,
                       reference: request.reference)
    }
}

extension SessionCreation {
    /// The org-iso-mdoc entry of the Digital Credentials API's `requests`.
    static func annexCRequest(_ web: (deviceRequest: String, encryptionInfo: String)) -> JSONObject {
        ["protocol": "org-iso-mdoc", "data": ["deviceRequest": .string(web.deviceRequest), "encryptionInfo": .string(web.encryptionInfo)]]
    }

    /// The OpenID4VP entry for `nonce`: the session's own response key,
    /// derived again by the worker from the nonce, signed by `signer`.
    static func openID4VPRequest(_ request: Request, nonce: IssuedNonce, signer: OpenID4VPVerifierIdentity?, config: Tenant,
                                 service: SessionService) throws(SessionError) -> JSONObject {
        guard let responseKey = service.nonceKey.responseKey(for: nonce),
              let made = try? OpenID4VPRequest.credentialRequest(
                  nonce: Base64.encodeURL(nonce.bytes), responseKey: responseKey.publicKey, docType: request.docType,
                  elements: request.elements + request.ages.map { $0.requestedElement(docType: request.docType) },
                  signer: signer, expectedOrigins: Array(config.origins))
        else { throw .internalFailure }
        return made
    }
}

/// A random (version 4) UUID from OpenSSL's generator: Foundation's `UUID()`
/// opens and reads /dev/urandom for each one, which a session creation would
/// otherwise spend three system calls on.
func randomSessionID() -> UUID {
    var bytes = secureRandomBytes(16)
    bytes[6] = bytes[6] & 0x0F | 0x40
    bytes[8] = bytes[8] & 0x3F | 0x80
    return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
}

extension SessionCreation {
    /// The session row's `requested`: the event's `requestedElements` array,
    /// or, when the session asks ages, `{"requestedElements", "ageAtLeast"}`
    /// (rows written before ages could be asked hold the array).
    struct RequestedJSON {
        var elements: [JSONValue] = []
        var ages: [JSONValue] = []

        init(_ text: String) {
            guard let value = try? RequestBody.parser.parse(Array(text.utf8)) else { return }
            if let list = value.arrayValue {
                elements = list
            } else if let object = value.objectValue {
                elements = object["requestedElements"]?.arrayValue ?? []
                ages = object["ageAtLeast"]?.arrayValue ?? []
            }
        }

        static func text(elements: [RequestedElement], ages: [AgeRequest]) -> String {
            let list = JSONValue.array(elements.map(RequestedElementJSON.value))
            guard !ages.isEmpty else { return list.jsonString(keyOrder: .insertion) }
            let asked = ages.map { age -> JSONValue in
                ["age": .integer(age.age), "retention": age.retention.jsonValue]
            }
            return JSONValue.object(["requestedElements": list, "ageAtLeast": .array(asked)]).jsonString(keyOrder: .insertion)
        }
    }
}

/// A requested element as the event schema writes it.
enum RequestedElementJSON {
    static func value(_ element: RequestedElement) -> JSONValue {
        .object(["namespace": .string(element.namespace), "element": .string(element.element), "retention": element.retention.jsonValue])
    }
}
