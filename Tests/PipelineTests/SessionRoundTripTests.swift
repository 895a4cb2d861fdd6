import Crypto
import Foundation
import JSON
import MDoc
import TestIssuer
import TestSupport
import Testing
import Verification

/// The whole server side, each flow end to end: `veridoc serve` creates a
/// session, the test issuer's wallet (or reader) answers what serve handed
/// out, serve turns the answer into the request event, a worker verifies it,
/// and `GET /v1/sessions/{id}` shows the verdict the outcome topic carries,
/// written in the result's own transaction. The tenant requires issued nonces.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct SessionRoundTripTests {
    static let key = "vdk_round-trip-key"
    static let otherKey = "vdk_other-tenant-key"

    final class Stack {
        let fixture: PipelineFixture
        let worker: WorkerProcess
        let serve: VeridocProcess
        let port: Int

        /// `origins` replace the tenant's (a page served by the test itself).
        init(origins: [String]? = nil) throws {
            fixture = try PipelineFixture(workerThreads: 1)
            var root = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as! [String: Any]
            var tenants = root["tenants"] as! [[String: Any]]
            tenants[0]["apiKeys"] = ["sha256:" + sha256Hex(SessionRoundTripTests.key)]
            tenants[0]["requireIssuedNonces"] = true
            if let origins { tenants[0]["origins"] = origins }
            tenants.append(["id": "globex", "trustAnchors": tenants[0]["trustAnchors"]!, "apiKeys": ["sha256:" + sha256Hex(SessionRoundTripTests.otherKey)]])
            root["tenants"] = tenants
            root["serve"] = ["port": 0, "loopbackOnly": true]
            try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: fixture.config)
            worker = try fixture.startWorker()
            serve = try VeridocProcess(command: "serve", config: fixture.config, name: "serve")
            port = try #require(serve.port(loggedAs: "session API listening"), "serve did not start: \(serve.log.suffix(1500))")
        }

        func call(_ method: String, _ path: String, _ body: [String: Any]? = nil, key: String? = SessionRoundTripTests.key) throws -> (status: Int, object: [String: Any]) {
            var headers: [(String, String)] = []
            if let key { headers.append(("Authorization", "Bearer \(key)")) }
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
            let response = try RawHTTP.request(method, path, port: port, headers: headers, body: bytes, timeout: 40)
            return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:])
        }

        func create(_ body: [String: Any]) throws -> [String: Any] {
            let created = try call("POST", "/v1/sessions", body)
            #expect(created.status == 201, "\(created.object)")
            return created.object
        }

        /// The session once the worker stored its verdict (long polls until then).
        func finished(_ id: String) throws -> [String: Any] {
            var shown: [String: Any] = [:]
            _ = try eventually(60, every: 0.01) {
                shown = try call("GET", "/v1/sessions/\(id)?wait=20").object
                return ["verified", "rejected"].contains(shown["status"] as? String ?? "")
            }
            return shown
        }

        deinit {
            serve.kill()
            worker.kill()
        }
    }

    static func sha256Hex(_ text: String) -> String {
        sha256(Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static var elements: [[String: Any]] { [
        ["namespace": "org.iso.18013.5.1", "element": "age_over_21", "retention": ["intent": "willNotStore"]],
        ["namespace": "org.iso.18013.5.1", "element": "family_name", "retention": ["intent": "mayStore", "days": 30]],
    ] }

    @Test func eachFlowFromSessionToVerdict() throws {
        let stack = try Stack()
        var factory = stack.fixture.factory
        var ids: [String] = []

        let app = try stack.create(["flow": "apple-wallet-app", "merchantId": factory.merchant.merchantID, "requestedElements": Self.elements])
        let appID = try #require(app["id"] as? String)
        let nonceText = try #require(app["nonce"] as? String)
        let nonce = try #require(Data(base64Encoded: nonceText))
        let encrypted = try factory.walletAnswer(appNonce: Array(nonce))
        #expect(try stack.call("POST", "/v1/sessions/\(appID)/response", ["payload": Data(encrypted).base64EncodedString()]).status == 202)
        ids.append(appID)

        let web = try stack.create(["flow": "apple-wallet-web", "origin": factory.merchant.origin, "requestedElements": Self.elements])
        let webID = try #require(web["id"] as? String)
        let request = try #require((web["request"] as? [String: Any])?["data"] as? [String: String])
        let info = try #require(request["encryptionInfo"])
        let response = try factory.walletAnswer(encryptionInfo: info, origin: factory.merchant.origin)
        #expect(try stack.call("POST", "/v1/sessions/\(webID)/response", ["response": Base64.encodeURL(response)]).status == 202)
        ids.append(webID)

        // OpenID4VP: serve signs the request (the tenant's verifier certificate);
        // the wallet checks it, answers the query, and seals to the session's key.
        let oid = try stack.create(["flow": "openid4vp-dc-api", "origin": factory.merchant.origin, "requestedElements": Self.elements])
        let oidID = try #require(oid["id"] as? String)
        let requestValue = try #require(oid["request"])
        let oidRequest = try #require(try JSONParser().parse(Array(try JSONSerialization.data(withJSONObject: requestValue))).objectValue)
        #expect(oidRequest["protocol"]?.stringValue == "openid4vp-v1-signed")
        let credential = try factory.walletAnswer(openID4VPRequest: oidRequest, origin: factory.merchant.origin)
        let credentialObject = try JSONSerialization.jsonObject(with: Data(JSONValue.object(credential).jsonBytes()))
        #expect(try stack.call("POST", "/v1/sessions/\(oidID)/response", ["response": credentialObject]).status == 202)
        ids.append(oidID)

        let iso = try stack.create(["flow": "iso-device-response"])
        let isoID = try #require(iso["id"] as? String)
        let reader = try factory.readerAnswer()
        let answer = ["deviceResponse": Data(reader.deviceResponse).base64EncodedString(), "sessionTranscript": Data(reader.sessionTranscript).base64EncodedString()]
        #expect(try stack.call("POST", "/v1/sessions/\(isoID)/response", answer).status == 202)
        // The same answer again is the same request: one result.
        #expect(try stack.call("POST", "/v1/sessions/\(isoID)/response", answer).status == 202)
        ids.append(isoID)

        let outcomes = try stack.fixture.outcomes(expected: ids.count)
        for id in ids {
            let shown = try stack.finished(id)
            #expect(shown["status"] as? String == "verified", "\(id): \(shown) \(stack.worker.log.suffix(1500))")
            let outcome = try #require(shown["outcome"] as? [String: Any], "\(shown)")
            #expect(outcome["verdict"] as? String == "verified")
            #expect(outcome["requestId"] as? String == id, "the event id is the session id")
            let checks = outcome["checks"] as? [[String: String]] ?? []
            #expect(checks.contains(["name": "request.issued_nonce", "status": "passed"]), "\(checks)")
            #expect(outcomes[OutcomeEvent.id(forRequest: id)] == id, "the outcome topic carries the same request")
            #expect(try stack.fixture.database.count("SELECT count(*) AS count FROM results WHERE event_id = '\(id)'") == 1)
        }
        // Another tenant's key finds none of them; no key is 401.
        #expect(try stack.call("GET", "/v1/sessions/\(appID)", key: Self.otherKey).status == 404)
        #expect(try stack.call("GET", "/v1/sessions/\(appID)", key: nil).status == 401)
    }

    /// A bar's door check through serve: a web session asking only
    /// `age(atLeast: 21)` hands the wallet a request for `age_over_21`, and
    /// the session's outcome answers it as a plain boolean. Asking the age
    /// element beside it is refused, as Apple's framework refuses it.
    @Test func anAgeCheckFromSessionToAnswer() throws {
        let stack = try Stack()
        var factory = stack.fixture.factory
        let ageCheck: [[String: Any]] = [["age": 21, "retention": ["intent": "willNotStore"]]]
        let web = try stack.create(["flow": "apple-wallet-web", "origin": factory.merchant.origin, "ageAtLeast": ageCheck])
        let webID = try #require(web["id"] as? String)
        let request = try #require((web["request"] as? [String: Any])?["data"] as? [String: String])
        let deviceRequestText = try #require(request["deviceRequest"])
        let deviceRequest = try #require(Base64.decodeURL(deviceRequestText))
        #expect(deviceRequest.firstRange(of: Array("age_over_21".utf8)) != nil, "the wallet is asked for age_over_21")
        let info = try #require(request["encryptionInfo"])
        let response = try factory.walletAnswer(encryptionInfo: info, origin: factory.merchant.origin)
        #expect(try stack.call("POST", "/v1/sessions/\(webID)/response", ["response": Base64.encodeURL(response)]).status == 202)
        let shown = try stack.finished(webID)
        let outcome = try #require(shown["outcome"] as? [String: Any], "\(shown)")
        #expect(outcome["verdict"] as? String == "verified", "\(shown)")
        let ages = try #require(outcome["ages"] as? [[String: Any]], "\(outcome)")
        #expect(ages.count == 1 && ages[0]["atLeast"] as? Int == 21 && ages[0]["answer"] as? Bool == true && ages[0]["element"] as? String == "age_over_21",
                "\(ages)")

        let both = try stack.call("POST", "/v1/sessions", ["flow": "apple-wallet-app", "merchantId": factory.merchant.merchantID, "ageAtLeast": ageCheck,
                                                           "requestedElements": [["namespace": "org.iso.18013.5.1", "element": "age_in_years",
                                                                                  "retention": ["intent": "willNotStore"]]]])
        #expect(both.status == 400 && "\(both.object)".contains("requestedElements[0]"), "\(both)")
    }

    /// A proximity read authenticated by a device MAC, through serve: verified
    /// when the tenant's registered reader signed what it forwards, with the
    /// reader named in the outcome; `device.mac_unbound` when it did not.
    @Test func aMacCountsThroughServeOnlyWhenTheRegisteredReaderSignedIt() throws {
        let stack = try Stack()
        var factory = stack.fixture.factory
        var sessions: [(id: String, signed: Bool)] = []
        for signed in [true, false] {
            let iso = try stack.create(["flow": "iso-device-response"])
            let id = try #require(iso["id"] as? String)
            let read = try factory.readerAnswerWithDeviceMac()
            var answer: [String: Any] = [
                "deviceResponse": Data(read.deviceResponse).base64EncodedString(), "sessionTranscript": Data(read.sessionTranscript).base64EncodedString(),
                "ephemeralReaderKey": Data(read.ephemeralReaderKey).base64EncodedString(),
            ]
            if signed {
                answer["readerAuthentication"] = try factory.merchant.readerAuthentication(
                    response: read.deviceResponse, transcript: read.sessionTranscript, ephemeralReaderKey: read.ephemeralReaderKey, signedAt: Date())
            }
            #expect(try stack.call("POST", "/v1/sessions/\(id)/response", answer).status == 202)
            sessions.append((id, signed))
        }
        for (id, signed) in sessions {
            let shown = try stack.finished(id)
            let outcome = try #require(shown["outcome"] as? [String: Any], "\(shown)")
            let reasons = (outcome["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            if signed {
                #expect(shown["status"] as? String == "verified", "\(shown) \(stack.worker.log.suffix(1500))")
                let document = outcome["document"] as? [String: Any]
                let device = document?["deviceAuthentication"] as? [String: Any]
                #expect(device?["method"] as? String == "mac" && device?["reader"] as? String == TestIssuer.Merchant.readerID, "\(outcome)")
            } else {
                #expect(shown["status"] as? String == "rejected", "\(shown)")
                #expect(reasons == ["device.mac_unbound"], "\(outcome)")
            }
        }
    }

    /// A proximity read accepted in one tenant's session, submitted again
    /// through serve to another tenant's session: the same presentation, so a
    /// replay, although the other tenant never saw it and the session is new.
    @Test func aReadAcceptedForOneTenantIsAReplayForAnother() throws {
        let stack = try Stack()
        var factory = stack.fixture.factory
        let read = try factory.readerAnswer()
        let answer = ["deviceResponse": Data(read.deviceResponse).base64EncodedString(), "sessionTranscript": Data(read.sessionTranscript).base64EncodedString()]
        let first = try #require(try stack.create(["flow": "iso-device-response"])["id"] as? String)
        #expect(try stack.call("POST", "/v1/sessions/\(first)/response", answer).status == 202)
        #expect(try stack.finished(first)["status"] as? String == "verified")

        let created = try stack.call("POST", "/v1/sessions", ["flow": "iso-device-response"], key: Self.otherKey)
        #expect(created.status == 201, "\(created.object)")
        let second = try #require(created.object["id"] as? String)
        #expect(try stack.call("POST", "/v1/sessions/\(second)/response", answer, key: Self.otherKey).status == 202)
        var shown: [String: Any] = [:]
        #expect(try eventually(60) {
            shown = try stack.call("GET", "/v1/sessions/\(second)?wait=20", key: Self.otherKey).object
            return ["verified", "rejected"].contains(shown["status"] as? String ?? "")
        }, "\(shown)")
        #expect(shown["status"] as? String == "rejected", "\(shown)")
        let outcome = shown["outcome"] as? [String: Any] ?? [:]
        let reasons = (outcome["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(reasons == ["request.nonce_reused"], "\(outcome)")
        let detail = (outcome["reasons"] as? [[String: Any]])?.first?["detail"] as? String ?? ""
        #expect(detail.contains("presentation") && !detail.contains(first) && !detail.contains(factory.merchant.tenantID), "\(detail)")
    }

    @Test func foreignAnswersForgedNoncesAndExpiredSessionsAreRejected() throws {
        let stack = try Stack()
        var factory = stack.fixture.factory
        let merchant = factory.merchant.merchantID

        // A wallet's answer for session A submitted to session B: B's nonce is not the one A's transcript holds.
        let first = try stack.create(["flow": "apple-wallet-app", "merchantId": merchant])
        let second = try stack.create(["flow": "apple-wallet-app", "merchantId": merchant])
        let firstText = try #require(first["nonce"] as? String)
        let firstNonce = try #require(Data(base64Encoded: firstText))
        let answerForFirst = try factory.walletAnswer(appNonce: Array(firstNonce))
        let secondID = try #require(second["id"] as? String)
        #expect(try stack.call("POST", "/v1/sessions/\(secondID)/response", ["payload": Data(answerForFirst).base64EncodedString()]).status == 202)
        let crossed = try stack.finished(secondID)
        #expect(crossed["status"] as? String == "rejected")
        let crossedCodes = ((crossed["outcome"] as? [String: Any])?["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
        #expect(crossedCodes == ["decryption.transcript_mismatch"], "\(crossed)")

        // Events the integrator produced itself, for a tenant that requires issued nonces:
        // its own random nonce, and a nonce serve issued whose session has expired.
        let own = try factory.event(.appleWalletApp)
        // The expired one is what serve would have issued for a session two minutes ago, made
        // here with the deployment's key rather than waited for.
        let expiring = try stack.create(["flow": "apple-wallet-app", "merchantId": merchant, "ttlSeconds": 1])
        let expiredID = try #require(expiring["id"] as? String)
        let keyText = try String(contentsOf: stack.fixture.directory.appendingPathComponent("nonce.key"), encoding: .utf8)
        let deploymentKey = IssuedNonce.Key(replayKey: Array(try #require(Data(base64Encoded: keyText))))
        let expiringNonce = deploymentKey.issue(
            session: try #require(UUID(uuidString: expiredID)), binding: IssuedNonce.Binding(tenant: factory.merchant.tenantID, flow: .appleWalletApp, audience: merchant),
            issuedAt: Date() - 120, lifetime: 1).bytes
        let late = try factory.walletAnswer(appNonce: expiringNonce)
        let lateID = UUID().uuidString.lowercased()
        let lateEvent: [String: Any] = [
            "specversion": "1.0", "id": lateID, "source": "/integrator", "type": VerificationRequest.eventType,
            "time": RFC3339.string(from: Date()), "datacontenttype": "application/json",
            "data": ["tenant": factory.merchant.tenantID, "flow": "apple-wallet-app", "payload": Data(late).base64EncodedString(),
                     "nonce": Data(expiringNonce).base64EncodedString(), "merchantId": merchant],
        ]
        try stack.fixture.produce([(own.id!, own.json()), (lateID, Array(try JSONSerialization.data(withJSONObject: lateEvent)))])
        #expect(try eventually(60) { try stack.fixture.database.results().keys.contains(lateID) && stack.fixture.database.results().keys.contains(own.id!) })
        let results = try stack.fixture.database.results()
        #expect(results[own.id!]?.reasons == ["request.nonce_unknown"], "\(String(describing: results[own.id!]))")
        #expect(results[lateID]?.reasons == ["request.expired"], "\(String(describing: results[lateID]))")
        // The expired session itself was completed by that result: GET and the outcome agree.
        #expect(try stack.call("GET", "/v1/sessions/\(expiredID)").object["status"] as? String == "rejected")
    }
}
