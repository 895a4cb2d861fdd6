import CBOR
import Crypto
import Foundation
import JOSE
import JSON
import Kafka
import KafkaMock
import MDoc
@testable import SessionAPI
import TestIssuer
import TestSupport
import Testing
import Verification

/// The session routes of `veridoc serve` over real HTTP, against the test
/// PostgreSQL and a mock cluster: what each flow's session hands out, who
/// may see it, and the request event a submit produces. The worker's side
/// (verdicts, statuses) is PipelineTests' SessionRoundTripTests.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct SessionRouteTests {
    let fixture: ServeFixture
    var port: Int { fixture.port }

    init() throws { fixture = try ServeFixture(burst: 1_000) }

    func call(_ method: String, _ path: String, _ body: String? = nil, key: String? = ServeFixture.acmeKey,
              timeout: TimeInterval = 10) throws -> (status: UInt32, object: [String: Any], response: RawHTTP.Response) {
        var headers: [(String, String)] = []
        if let key { headers.append(("Authorization", "Bearer \(key)")) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try RawHTTP.request(method, path, port: port, headers: headers, body: Array((body ?? "").utf8), timeout: timeout)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:]
        return (UInt32(response.status), object, response)
    }

    var nonceKey: IssuedNonce.Key {
        get throws {
            let text = try String(contentsOf: fixture.folder.appendingPathComponent("nonce.key"), encoding: .utf8)
            return IssuedNonce.Key(replayKey: Array(try #require(Data(base64Encoded: text))))
        }
    }

    static let elements = #"[{"namespace":"org.iso.18013.5.1","element":"age_over_21","retention":{"intent":"willNotStore"}},{"namespace":"org.iso.18013.5.1","element":"family_name","retention":{"intent":"mayStore","days":30}}]"#

    @Test func anAppSessionHandsOutAnIssuedNonceBoundToItsMerchant() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":60,"reference":"order-17"}"#)
        #expect(created.status == 201, "\(created.response.body)")
        let id = try #require(created.object["id"] as? String)
        #expect(created.response.headers["location"] == "/v1/sessions/\(id)")
        #expect(Set(created.object.keys) == ["id", "flow", "expiresAt", "nonce", "merchantId", "reference"])
        let nonceText = try #require(created.object["nonce"] as? String)
        let nonce = try #require(Data(base64Encoded: nonceText))
        let binding = IssuedNonce.Binding(tenant: "acme", flow: .appleWalletApp, audience: ServeFixture.merchantID)
        let opened = try #require(try nonceKey.open(Array(nonce), binding: binding), "the nonce is one the workers' key opens")
        #expect(opened.sessionID.uuidString.lowercased() == id)
        #expect(opened.expiresAt.timeIntervalSince(opened.issuedAt) == 60)
        #expect(try nonceKey.open(Array(nonce), binding: IssuedNonce.Binding(tenant: "globex", flow: .appleWalletApp, audience: ServeFixture.merchantID)) == nil)

        let shown = try call("GET", "/v1/sessions/\(id)")
        #expect(shown.status == 200)
        #expect(shown.object["status"] as? String == "pending")
        #expect(shown.object["reference"] as? String == "order-17")
        #expect(shown.object["outcome"] == nil)
        // Another tenant's key finds nothing, a missing key is 401, a malformed id 404.
        #expect(try call("GET", "/v1/sessions/\(id)", key: ServeFixture.globexKey).status == 404)
        #expect(try call("GET", "/v1/sessions/\(id)", key: nil).status == 401)
        #expect(try call("GET", "/v1/sessions/\(id.uppercased())").status == 404)
        #expect(try call("GET", "/v1/sessions/not-a-session").status == 404)
        #expect(try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAAA"}"#, key: ServeFixture.globexKey).status == 404)

        let metrics = try RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body
        let samples = try PrometheusText(metrics).samples
        let counted = samples.first { $0.name == "veridoc_api_sessions_created_total" && $0.labels == ["flow": "apple-wallet-app"] }
        #expect((counted?.value ?? 0) >= 1, "sessions created are counted by flow")
        #expect(!metrics.contains("acme"), "no tenant id on the metrics listener")
        #expect(!metrics.contains(id) && !metrics.contains(nonceText), "no session id or nonce in metrics")
    }

    @Test func aWebSessionHandsOutTheDigitalCredentialsRequest() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-web","origin":"\#(ServeFixture.origin)","requestedElements":\#(Self.elements)}"#)
        #expect(created.status == 201, "\(created.response.body)")
        let request = try #require(created.object["request"] as? [String: Any])
        #expect(request["protocol"] as? String == "org-iso-mdoc")
        let data = try #require(request["data"] as? [String: String])
        let infoText = try #require(data["encryptionInfo"])
        let infoBytes = try #require(Base64.decodeURL(infoText))
        let info = try AnnexCEncryptionInfo(bytes: infoBytes[...])
        let binding = IssuedNonce.Binding(tenant: "acme", flow: .appleWalletWeb, audience: ServeFixture.origin)
        #expect(try nonceKey.open(Array(info.nonce), binding: binding) != nil, "EncryptionInfo carries an issued nonce")
        let merchant = try PrivateKey(pemFile: fixture.folder.appendingPathComponent("merchant.pem"))
        #expect(info.recipientPublicKey.uncompressedPoint == merchant.publicKey.uncompressedPoint, "responses are encrypted to the tenant's first key")

        let requestText = try #require(data["deviceRequest"])
        let requestBytes = try #require(Base64.decodeURL(requestText))
        let deviceRequest = try CBORDecoder().decode(requestBytes).value
        #expect(deviceRequest["version"] == "1.1")
        guard case .array(let docRequests)? = deviceRequest["docRequests"], case .tagged(24, .bytes(let embedded))? = docRequests.first?["itemsRequest"] else {
            Issue.record("DeviceRequest.docRequests[0].itemsRequest is not #6.24(bstr)")
            return
        }
        #expect(docRequests.first?["readerAuth"] == nil, "one readerAuthAll, no per-document readerAuth, as in Apple's sample")
        let items = try CBORDecoder().decode(embedded).value
        #expect(items["docType"] == "org.iso.18013.5.1.mDL")
        #expect(items["nameSpaces"] == ["org.iso.18013.5.1": ["age_over_21": false, "family_name": true]], "intent to retain per element")
        guard case .tagged(24, .bytes(let infoEmbedded))? = deviceRequest["deviceRequestInfo"] else {
            Issue.record("deviceRequestInfo is not #6.24(bstr)")
            return
        }
        #expect(try CBORDecoder().decode(infoEmbedded).value == ["useCases": [["mandatory": true, "documentSets": [[0]]]]])

        // readerAuthAll, checked by a path that is not the signer's: the structures
        // rebuilt here as values from what the request carries, the signature checked
        // by the openssl command with the configured certificate's key.
        let certificate = try String(contentsOf: fixture.folder.appendingPathComponent("web-reader.pem"), encoding: .utf8)
        let certificateDER = try #require(try Certificate.parsePEM(certificate).first).der
        guard case .array(let signatures)? = deviceRequest["readerAuthAll"], signatures.count == 1, case .array(let sign1) = signatures[0], sign1.count == 4,
              case .bytes(let protected) = sign1[0], case .bytes(let signature) = sign1[3] else {
            Issue.record("readerAuthAll is not [COSE_Sign1]")
            return
        }
        #expect(try CBORDecoder().decode(protected).value == [1: -7], "ES256")
        #expect(sign1[1] == [33: .bytes(certificateDER)], "the configured certificate in x5chain, as one bstr")
        #expect(sign1[2] == .null, "detached payload")
        func readerAuthentication(origin: String, items: [UInt8]) -> [UInt8] {
            let transcript: CBOR = [.null, .null, ["dcapi", .bytes(sha256(CBOR.array([.text(infoText), .text(origin)]).encoded()))]]
            let all: CBOR = ["ReaderAuthenticationAll", transcript, [.tagged(24, .bytes(items))], .tagged(24, .bytes(infoEmbedded))]
            let payload = CBOR.tagged(24, .bytes(all.encoded())).encoded()
            return CBOR.array(["Signature1", .bytes(protected), .bytes([]), .bytes(payload)]).encoded()
        }
        func opensslVerifies(_ toBeSigned: [UInt8], certificate: String = "web-reader.pem") throws -> Bool {
            let scratch = fixture.folder.appendingPathComponent("check-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let pem = try String(contentsOf: fixture.folder.appendingPathComponent(certificate), encoding: .utf8)
            let key = try #require(try Certificate.parsePEM(pem).first).publicKey()
            return try OpenSSLVerify.check(signature: Array(signature), over: toBeSigned, publicKey: key, in: scratch).status == 0
        }
        #expect(try opensslVerifies(readerAuthentication(origin: ServeFixture.origin, items: embedded)), "signed over this request's Annex C transcript")
        #expect(try !opensslVerifies(readerAuthentication(origin: ServeFixture.origin + "/", items: embedded)), "one transcript byte more: refused")
        var otherItems = embedded
        otherItems[otherItems.count - 1] ^= 0x01
        #expect(try !opensslVerifies(readerAuthentication(origin: ServeFixture.origin, items: otherItems)), "one item changed: refused")
        try ServeFixture.writeWebReader(in: fixture.folder.appendingPathComponent("other-reader"), creating: true)
        #expect(try !opensslVerifies(readerAuthentication(origin: ServeFixture.origin, items: embedded), certificate: "other-reader/web-reader.pem"),
                "another certificate's key: refused")
        // Apple's certificates are short-lived: serve says when the first one expires (the fixture's: in two days).
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
        let expiry = metrics.values("veridoc_web_reader_certificate_expiry_timestamp_seconds").first?.value ?? 0
        #expect(abs(expiry - Date().addingTimeInterval(2 * 86_400).timeIntervalSince1970) < 3_600, "\(expiry)")

        // Web needs elements and an origin of the tenant's.
        let missing = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-web","origin":"\#(ServeFixture.origin)"}"#)
        #expect(missing.status == 400 && missing.object["field"] as? String == "requestedElements")
        let foreign = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-web","origin":"https://evil.example","requestedElements":\#(Self.elements)}"#)
        #expect(foreign.status == 400 && foreign.object["field"] as? String == "origin")
    }

    @Test func badBodiesNameTheirField() throws {
        let cases: [(String, String)] = [
            (#"{"flow":"apple-wallet-app"}"#, "merchantId"),
            (#"{"flow":"apple-wallet-app","merchantId":"merchant.other"}"#, "merchantId"),
            (#"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","origin":"\#(ServeFixture.origin)"}"#, "origin"),
            (#"{"flow":"carrier-pigeon"}"#, "flow"),
            (#"{"flow":"iso-device-response","ttlSeconds":121}"#, "ttlSeconds"),
            (#"{"flow":"iso-device-response","colour":"blue"}"#, "colour"),
            (#"{"flow":"iso-device-response","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"willNotStore","days":3}}]}"#, "requestedElements[0].retention.days"),
            (#"{"flow":"iso-device-response","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"forever"}}]}"#, "requestedElements[0].retention.intent"),
            (#"{"flow":"iso-device-response","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"willNotStore"}},{"namespace":"n","element":"e","retention":{"intent":"mayStore"}}]}"#, "requestedElements[1]"),
        ]
        for (body, field) in cases {
            let answer = try call("POST", "/v1/sessions", body)
            #expect(answer.status == 400, "\(body): \(answer.response.body)")
            #expect(answer.object["field"] as? String == field, "\(body): \(answer.response.body)")
            #expect(!answer.response.body.contains("blue") && !answer.response.body.contains("merchant.other"), "no value echoed")
        }
        #expect(try call("POST", "/v1/sessions", #"{"flow":"iso-device-response"}"#, key: nil).status == 401)
    }

    @Test func aSubmitProducesOneEventAndASecondDifferentResponseIsAConflict() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"iso-device-response","requestedElements":\#(Self.elements)}"#)
        #expect(created.status == 201, "\(created.response.body)")
        let id = try #require(created.object["id"] as? String)
        #expect(Set(created.object.keys) == ["id", "flow", "expiresAt"])
        let body = #"{"deviceResponse":"oWd2ZXJzaW9u","sessionTranscript":"g/b2gA=="}"#
        let submitted = try call("POST", "/v1/sessions/\(id)/response", body)
        #expect(submitted.status == 202, "\(submitted.response.body)")
        #expect(submitted.response.headers["location"] == "/v1/sessions/\(id)")
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "processing")
        #expect(try call("POST", "/v1/sessions/\(id)/response", body).status == 202, "the same response again is the same request")
        let other = try call("POST", "/v1/sessions/\(id)/response", #"{"deviceResponse":"oWd2ZXJzaW9v","sessionTranscript":"g/b2gA=="}"#)
        #expect(other.status == 409 && other.object["error"] as? String == "response_conflict")
        let wrongFlow = try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAAA"}"#)
        #expect(wrongFlow.status == 400 && wrongFlow.object["field"] as? String == "payload")

        // Both accepted submits reached the request topic as one event id, built from the session.
        let events = try requestEvents(expected: 2)
        #expect(events.count == 2)
        for event in events {
            #expect(event["id"] as? String == id)
            #expect(event["type"] as? String == VerificationRequest.eventType)
            let data = try #require(event["data"] as? [String: Any])
            #expect(data["tenant"] as? String == "acme")
            #expect(data["flow"] as? String == "iso-device-response")
            #expect(data["payload"] as? String == "oWd2ZXJzaW9u")
            #expect(data["sessionTranscript"] as? String == "g/b2gA==")
            let tokenText = try #require(data["sessionToken"] as? String)
            let token = try #require(Data(base64Encoded: tokenText))
            let opened = try nonceKey.open(Array(token), binding: IssuedNonce.Binding(tenant: "acme", flow: .isoDeviceResponse, audience: ""))
            #expect(opened?.sessionID.uuidString.lowercased() == id)
            #expect((data["requestedElements"] as? [[String: Any]])?.count == 2)
        }
        let parsed = EventParser().parse(json: Array(try JSONSerialization.data(withJSONObject: events[0])))
        if case .failure(let rejection) = parsed { Issue.record("serve's event does not parse: \(rejection.detail)") }
    }

    /// An answer whose event would pass the event size limit (here 1,024 bytes) is 413 and leaves the session as it was.
    @Test func anAnswerTooLargeForAnEventDoesNotUseTheSessionUp() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","requestedElements":\#(Self.elements)}"#)
        let id = try #require(created.object["id"] as? String)
        let payload = Data(repeating: 0x41, count: 600).base64EncodedString()
        let large = try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"\#(payload)"}"#)
        #expect(large.status == 413 && large.object["error"] as? String == "body_too_large", "\(large.response.body)")
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "pending")
        #expect(try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAAA"}"#).status == 202, "a smaller answer is still taken")
    }

    @Test func anExpiredSessionTakesNoResponse() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":1}"#)
        let id = try #require(created.object["id"] as? String)
        #expect(try eventually(60) { try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "expired" })
        let late = try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAAA"}"#)
        #expect(late.status == 409 && late.object["error"] as? String == "session_expired", "\(late.response.body)")
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "expired")
    }

    @Test func aLongPollReturnsWhenTheStatusChanges() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":2}"#)
        let id = try #require(created.object["id"] as? String)
        let started = Date()
        let waited = try call("GET", "/v1/sessions/\(id)?wait=30", timeout: 40)
        // Expired: so it was held at least until the session's 2 s were up;
        // and answered well before the 30 s it could have waited, however busy the machine.
        #expect(waited.object["status"] as? String == "expired")
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 25, "held until the session expired, not for the whole wait: \(seconds) s")
        #expect(try call("GET", "/v1/sessions/\(id)?wait=31").status == 400)
        // The poll's time is in its own histogram, not in the route's (which has only the refused wait=31).
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
        #expect(metrics.values("veridoc_api_long_poll_seconds_count").first?.value == 1)
        #expect(metrics.values("veridoc_api_request_seconds_count").first { $0.labels == ["route": "session"] }?.value == 1)
    }

    /// An OpenID4VP session hands out a request object signed with the
    /// tenant's verifier certificate, checked here by jwcrypto (an independent
    /// JOSE implementation) against that certificate, whose parameters name
    /// the issued nonce, the session's own key and the elements asked; the
    /// submitted credential `data` goes into the event as it came.
    @Test func anOpenID4VPSessionHandsOutASignedRequestAndItsAnswerBecomesTheEvent() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"openid4vp-dc-api","origin":"\#(ServeFixture.origin)","requestedElements":\#(Self.elements)}"#)
        #expect(created.status == 201, "\(created.response.body)")
        let id = try #require(created.object["id"] as? String)
        let request = try #require(created.object["request"] as? [String: Any])
        #expect(request["protocol"] as? String == "openid4vp-v1-signed")
        let jws = try #require((request["data"] as? [String: Any])?["request"] as? String)
        let certificate = fixture.folder.appendingPathComponent("openid4vp-verifier.pem").path
        let python = Binaries.repository.appendingPathComponent(".build/tools-venv/bin/python")
        try #require((try? Subprocess.run(python, ["-c", "import jwcrypto"]).status) == 0, "needs the tools venv's jwcrypto: run through `make test`")
        let verified = try Subprocess.output(python, ["-c", """
            import sys
            from jwcrypto import jwk, jws
            key = jwk.JWK.from_pem(open(sys.argv[1], "rb").read())
            token = jws.JWS()
            token.deserialize(sys.argv[2])
            token.verify(key, alg="ES256")
            print(token.jose_header["typ"])
            sys.stdout.write(token.payload.decode())
            """, certificate, jws])
        let lines = verified.split(separator: "\n", maxSplits: 1).map(String.init)
        #expect(lines.first == "oauth-authz-req+jwt")
        let parameters = try #require(try JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8)) as? [String: Any])
        #expect(parameters["client_id"] as? String == "x509_san_dns:shop.example.com")
        #expect(parameters["expected_origins"] as? [String] == [ServeFixture.origin])
        #expect(parameters["response_type"] as? String == "vp_token")
        #expect(parameters["response_mode"] as? String == "dc_api.jwt")
        let nonceText = try #require(parameters["nonce"] as? String)
        let nonceBytes = try #require(Base64.decodeURLUnpadded(nonceText))
        let binding = IssuedNonce.Binding(tenant: "acme", flow: .openID4VPDCAPI, audience: ServeFixture.origin)
        let issued = try #require(try nonceKey.open(nonceBytes, binding: binding))
        #expect(issued.sessionID.uuidString.lowercased() == id)
        let metadata = try #require(parameters["client_metadata"] as? [String: Any])
        #expect(metadata["encrypted_response_enc_values_supported"] as? [String] == ["A128GCM", "A256GCM"])
        let jwk = try #require(((metadata["jwks"] as? [String: Any])?["keys"] as? [[String: Any]])?.first)
        let sessionKey = try #require(try nonceKey.responseKey(for: issued)?.publicKey)
        let thumbprint = try #require(ECJWK.thumbprint(of: sessionKey))
        #expect(jwk["kid"] as? String == Base64.encodeURL(thumbprint))
        #expect(jwk["alg"] as? String == "ECDH-ES" && jwk["use"] as? String == "enc" && jwk["d"] == nil)
        #expect(jwk["x"] as? String == ECJWK.object(for: sessionKey)?["x"]?.stringValue)
        let credentials = try #require((parameters["dcql_query"] as? [String: Any])?["credentials"] as? [[String: Any]])
        #expect(credentials.count == 1 && credentials[0]["format"] as? String == "mso_mdoc")
        #expect((credentials[0]["meta"] as? [String: String])?["doctype_value"] == "org.iso.18013.5.1.mDL")
        let claims = try #require(credentials[0]["claims"] as? [[String: Any]])
        #expect(claims.map { $0["path"] as? [String] ?? [] } == [["org.iso.18013.5.1", "age_over_21"], ["org.iso.18013.5.1", "family_name"]])
        #expect(claims.map { $0["intent_to_retain"] as? Bool } == [false, true])
        // The verifier certificate's expiry is a metric (the fixture's: in two days).
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
        let expiry = metrics.values("veridoc_openid4vp_verifier_certificate_expiry_timestamp_seconds").first?.value ?? 0
        #expect(abs(expiry - Date().addingTimeInterval(2 * 86_400).timeIntervalSince1970) < 3_600, "\(expiry)")

        // Answers: a string (the Annex C form) is refused naming the field; the wallet's error response goes into the event.
        let wrongShape = try call("POST", "/v1/sessions/\(id)/response", #"{"response":"AAAA"}"#)
        #expect(wrongShape.status == 400 && wrongShape.object["field"] as? String == "response", "\(wrongShape.response.body)")
        let twoMembers = try call("POST", "/v1/sessions/\(id)/response", #"{"response":{"response":"a.b.c.d.e","vp_token":{}}}"#)
        #expect(twoMembers.status == 400 && twoMembers.object["field"] as? String == "response")
        let declined = try call("POST", "/v1/sessions/\(id)/response", #"{"response":{"error":"access_denied"}}"#)
        #expect(declined.status == 202, "\(declined.response.body)")
        let event = try #require(try requestEvents(expected: 1).first)
        let data = try #require(event["data"] as? [String: Any])
        #expect(data["flow"] as? String == "openid4vp-dc-api")
        #expect(data["origin"] as? String == ServeFixture.origin)
        #expect(data["nonce"] as? String == nonceText)
        #expect(data["response"] as? [String: String] == ["error": "access_denied"])
        let parsed = EventParser().parse(json: Array(try JSONSerialization.data(withJSONObject: event)))
        if case .failure(let rejection) = parsed { Issue.record("serve's event does not parse: \(rejection.detail)") }
    }

    /// A web session offers both protocols in one `navigator.credentials.get`
    /// argument, Annex C first (the tenant's default order); the OpenID4VP
    /// entry's nonce is the session's under that flow. The submit route takes
    /// the DigitalCredential the browser returned and names what it refuses.
    @Test func aWebSessionOffersBothProtocolsAndTakesEitherCredential() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-web","origin":"\#(ServeFixture.origin)","requestedElements":\#(Self.elements)}"#)
        #expect(created.status == 201, "\(created.response.body)")
        let id = try #require(created.object["id"] as? String)
        let requests = try #require(((created.object["credentialRequestOptions"] as? [String: Any])?["digital"] as? [String: Any])?["requests"] as? [[String: Any]])
        #expect(requests.map { $0["protocol"] as? String } == ["org-iso-mdoc", "openid4vp-v1-signed"])
        let annexC = try #require(created.object["request"] as? [String: Any])
        #expect(NSDictionary(dictionary: requests[0]).isEqual(to: annexC), "the Annex C entry is `request`")
        let jws = try #require((requests[1]["data"] as? [String: Any])?["request"] as? String)
        let payload = try #require(Base64.decodeURLUnpadded(String(jws.split(separator: ".")[1])))
        let parameters = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        let nonceText = try #require(parameters["nonce"] as? String)
        let nonce = try #require(Base64.decodeURLUnpadded(nonceText))
        let opened = try nonceKey.open(nonce, binding: IssuedNonce.Binding(tenant: "acme", flow: .openID4VPDCAPI, audience: ServeFixture.origin))
        #expect(opened?.sessionID.uuidString.lowercased() == id, "the OpenID4VP nonce names the same session")

        let unknown = try call("POST", "/v1/sessions/\(id)/response", #"{"protocol":"openid4vp-v1-unsigned","data":{"error":"access_denied"}}"#)
        #expect(unknown.status == 400 && unknown.object["field"] as? String == "protocol", "a protocol the session did not offer")
        let badData = try call("POST", "/v1/sessions/\(id)/response", #"{"protocol":"org-iso-mdoc","data":{"response":"!!"}}"#)
        #expect(badData.status == 400 && badData.object["field"] as? String == "data.response", "\(badData.response.body)")
        let noData = try call("POST", "/v1/sessions/\(id)/response", #"{"protocol":"openid4vp-v1-signed"}"#)
        #expect(noData.status == 400 && noData.object["field"] as? String == "data")
        let declined = try call("POST", "/v1/sessions/\(id)/response", #"{"protocol":"openid4vp-v1-signed","data":{"error":"access_denied"}}"#)
        #expect(declined.status == 202, "\(declined.response.body)")
        let event = try #require(try requestEvents(expected: 1).first)
        let data = try #require(event["data"] as? [String: Any])
        #expect(data["flow"] as? String == "openid4vp-dc-api", "the web session's OpenID4VP answer is an event of that flow")
        #expect(data["nonce"] as? String == parameters["nonce"] as? String)
        #expect(data["origin"] as? String == ServeFixture.origin && data["encryptionInfo"] == nil)
    }

    /// The events on the request topic, until `expected` came or 20 s passed.
    func requestEvents(expected: Int) throws -> [[String: Any]] {
        try TopicReader.read("veridoc.requests", bootstrap: fixture.cluster.bootstrapServers, expected: expected, seconds: 20).compactMap {
            try JSONSerialization.jsonObject(with: Data($0.value)) as? [String: Any]
        }
    }
}

