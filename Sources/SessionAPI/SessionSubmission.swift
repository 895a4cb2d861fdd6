import Crypto
import Foundation
import HTTPService
import JSON
import MDoc
import Storage
import Verification

/// `POST /v1/sessions/{id}/response`: the wallet's (or reader's) answer,
/// turned into the `veridoc.verification.requested.v1` event from what the
/// session holds, and produced to the request topic. The event id is the
/// session id, so a repeated submit is one request; the session keeps the
/// first response's digest, so a different second one is a conflict.
enum SessionSubmission {
    /// The answer's fields as the event carries them, in event order.
    struct Answer {
        var fields: [(name: String, value: String)]

        /// SHA-256 over each field's name and value, each with its length
        /// first: what a second submit must repeat to be the same response.
        var digest: [UInt8] {
            var input: [UInt8] = []
            for (name, value) in fields {
                for part in [Array(name.utf8), Array(value.utf8)] {
                    input += withUnsafeBytes(of: UInt32(part.count).bigEndian, Array.init)
                    input += part
                }
            }
            return sha256(input)
        }
    }

    /// The field that marks an OpenID4VP answer to a web session, whose event is of the openid4vp-dc-api flow.
    static let openID4VPMark = (name: "protocol", value: "openid4vp")

    static func read(_ body: inout RequestBody, flow: Flow, tenant: Tenant, maxBytes: Int) throws(APIError) -> Answer {
        var fields: [(String, String)] = []
        var missing: String?
        func base64(_ name: String, url: Bool = false, required: Bool = true) throws(APIError) {
            guard let text = try body.string(name, maxBytes: maxBytes) else {
                if required && missing == nil { missing = name }
                return
            }
            let decoded = url ? Base64.decodeURL(text) : Base64.decodeStandard(text)
            guard decoded?.isEmpty == false else {
                throw .invalidField(name, expected: url ? "base64url (RFC 4648 §5)" : "standard base64 (RFC 4648 §4, padded)")
            }
            fields.append((name, text))
        }
        switch flow {
        case .appleWalletApp:
            try base64("payload")
        case .appleWalletWeb, .openID4VPDCAPI:
            // The DigitalCredential the browser returned, `{protocol, data}`, or (as before) its `data.response` alone.
            if let protocolName = try body.string("protocol", maxBytes: 64) {
                let openID4VP = [OpenID4VPRequest.signedProtocol, OpenID4VPRequest.unsignedProtocol]
                if protocolName == "org-iso-mdoc" && flow == .appleWalletWeb {
                    guard var data = try body.object("data") else { throw .missingField("data") }
                    let text = try data.requiredString("response", maxBytes: maxBytes)
                    guard Base64.decodeURL(text)?.isEmpty == false else { throw .invalidField(data.field("response"), expected: "base64url (RFC 4648 §5)") }
                    try data.finish()
                    fields.append(("response", text))
                } else if openID4VP.contains(protocolName) {
                    let offered = tenant.openID4VPVerifier != nil ? OpenID4VPRequest.signedProtocol : OpenID4VPRequest.unsignedProtocol
                    guard protocolName == offered, flow == .openID4VPDCAPI || tenant.webSessionsOfferOpenID4VP else {
                        throw .invalidField("protocol", expected: "a protocol this session offered")
                    }
                    guard let data = try body.rawObject("data") else { throw .missingField("data") }
                    if let problem = OpenID4VPResponse.problem(in: .object(data)) { throw .invalidField("data", expected: problem) }
                    if flow == .appleWalletWeb { fields.append(openID4VPMark) }
                    fields.append(("response", JSONValue.object(data).jsonString(keyOrder: .insertion)))
                } else {
                    throw .invalidField("protocol", expected: flow == .appleWalletWeb ? "org-iso-mdoc, \(openID4VP.joined(separator: " or "))" : openID4VP.joined(separator: " or "))
                }
            } else if flow == .appleWalletWeb {
                try base64("response", url: true)
            } else if let response = try body.rawObject("response") {
                // The credential's `data` as the browser's promise resolved with it, carried into the event as it came.
                if let problem = OpenID4VPResponse.problem(in: .object(response)) { throw .invalidField("response", expected: problem) }
                fields.append(("response", JSONValue.object(response).jsonString(keyOrder: .insertion)))
            } else {
                missing = "response"
            }
        case .isoDeviceResponse:
            // The event's names: the reader app's deviceResponse is the event's payload.
            try base64("deviceResponse")
            try base64("sessionTranscript")
            try base64("ephemeralReaderKey", required: false)
            if var reader = try body.object("readerAuthentication") {
                // Carried into the event as the reader wrote it; the workers check the signature.
                for (name, limit) in [("readerId", 256), ("signedAt", 64), ("signature", 128)] {
                    fields.append(("readerAuthentication.\(name)", try reader.requiredString(name, maxBytes: limit)))
                }
                try reader.finish()
            }
        }
        // A field of another flow's answer is named as that, before what this flow misses.
        try body.finish()
        if let missing { throw .missingField(missing) }
        return Answer(fields: fields)
    }

    /// Takes `answer` as the session's response and sends its request event
    /// to the workers. The session was found by the caller (its flow decides
    /// how the answer is read); a repeat of the response it took is taken again.
    static func submit(_ answer: Answer, to session: SessionsTable.Stored, service: SessionService, now: Date,
                       maxBytes: Int) throws(SessionError) {
        let tenant = session.row.tenant, id = session.row.id
        // Built before the session takes the answer: an event the workers
        // would refuse for its size must not use the session up.
        let request = event(for: session.row, answer: answer, nonceKey: service.nonceKey)
        guard request.count <= maxBytes else { throw .eventTooLarge(limit: maxBytes) }
        let digest = answer.digest
        let submission = SubmissionsTable.Row(tenant: tenant, sessionID: id, key: Array(id.uuidString.lowercased().utf8), event: request)
        // The response and its event are taken together or not at all: once
        // committed, the event reaches the broker, now or by the relay.
        let taken = try service.pool.with { connection in
            try connection.transaction { connection in
                guard try connection.execute(SessionsTable.takeResponse(tenant: tenant, id: id, digest: digest, at: now)).rowCount == 1 else { return false }
                _ = try connection.execute(SubmissionsTable.insert(submission, claimedForSeconds: service.producer.deliveryTimeout + 5))
                return true
            }
        }
        if !taken {
            // Someone else's submit may have come between the find and the take: read again.
            guard let current = try SessionLookup.find(tenant: tenant, id: id, service: service, now: now) else { throw .notFound }
            guard let stored = current.responseDigest else { throw .expired }
            guard constantTimeEqual(stored, digest) else { throw .responseConflict }
        }
        // Sent again when this is a repeat: if the first submit's delivery
        // failed, this one may get the event out sooner than the relay; if it
        // did not, the worker sees the same event id twice and keeps one.
        // Not delivered now (the broker is away), the accepted response waits
        // for the relay (`SubmissionRelay`): the answer is 202 either way.
        if (try? service.producer.deliver(key: submission.key, value: request)) != nil {
            _ = try? service.pool.with { connection in try connection.execute(SubmissionsTable.delete(tenant: tenant, sessionID: id)) }
        }
    }

    /// The request event: its `time` is when the session (and its nonce) was
    /// issued. A web session's OpenID4VP answer is an event of that flow, with
    /// the session's nonce under it (`IssuedNonce.Key.sibling`).
    static func event(for session: SessionsTable.Row, answer: Answer, nonceKey: IssuedNonce.Key) -> [UInt8] {
        let openID4VPAnswer = answer.fields.contains { $0 == openID4VPMark }
        let flow = openID4VPAnswer ? Flow.openID4VPDCAPI : Flow(rawValue: session.flow)
        var data: JSONObject = ["tenant": .string(session.tenant), "flow": .string(flow?.rawValue ?? session.flow)]
        var reader: JSONObject = [:]
        for (name, value) in answer.fields where !(name == openID4VPMark.name && value == openID4VPMark.value) {
            if name.hasPrefix("readerAuthentication.") {
                reader[String(name.dropFirst("readerAuthentication.".count))] = .string(value)
            } else if name == "response", flow == .openID4VPDCAPI,
                      let object = try? RequestBody.parser.parse(Array(value.utf8)) {
                data["response"] = object
            } else {
                data[name == "deviceResponse" ? "payload" : name] = .string(value)
            }
        }
        if !reader.isEmpty { data["readerAuthentication"] = .object(reader) }
        switch flow {
        case .appleWalletApp:
            data["nonce"] = .string(Base64.encodeStandard(session.nonce))
            data["merchantId"] = .string(session.audience)
        case .appleWalletWeb:
            data["encryptionInfo"] = .string(session.encryptionInfo ?? "")
            data["origin"] = .string(session.audience)
        case .isoDeviceResponse:
            data["sessionToken"] = .string(Base64.encodeStandard(session.nonce))
        case .openID4VPDCAPI:
            data["origin"] = .string(session.audience)
            // Serve's requests ask one credential under this id: an answer under another is not to them.
            data["credentialQueryId"] = .string(OpenID4VPRequest.credentialQueryID)
            var nonce = session.nonce
            if openID4VPAnswer, let sessionFlow = Flow(rawValue: session.flow), let issued = nonceKey.open(session.nonce, binding: IssuedNonce.Binding(
                tenant: session.tenant, flow: sessionFlow, audience: session.audience)) {
                nonce = nonceKey.sibling(of: issued, binding: IssuedNonce.Binding(tenant: session.tenant, flow: .openID4VPDCAPI,
                                                                                   audience: session.audience)).bytes
            }
            data["nonce"] = .string(Base64.encodeURL(nonce))
        case nil:
            break
        }
        // What the session asked for: the response must be of its docType (`response.doctype_not_requested`).
        if !session.docType.isEmpty { data["requestedDocTypes"] = .array([.string(session.docType)]) }
        let requested = SessionCreation.RequestedJSON(session.requested)
        if !requested.elements.isEmpty { data["requestedElements"] = .array(requested.elements) }
        if !requested.ages.isEmpty { data["ageAtLeast"] = .array(requested.ages) }
        let event: JSONObject = [
            "specversion": "1.0", "id": .string(session.id.uuidString.lowercased()), "source": "/veridoc/serve",
            "type": .string(VerificationRequest.eventType), "time": .string(RFC3339.string(from: session.createdAt)),
            "datacontenttype": "application/json", "data": .object(data),
        ]
        return JSONValue.object(event).jsonBytes(keyOrder: .insertion)
    }
}
