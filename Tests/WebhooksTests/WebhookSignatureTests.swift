import Crypto
import Foundation
import HTTPClient
import Testing
import TestSupport
import Webhooks

/// Veridoc's signatures as a receiver Veridoc did not write checks them:
/// scripts/webhook-receiver verifies with the standardwebhooks package
/// (PyPI) and Ed25519 with cryptography, over real HTTP.
@Suite(.enabled(if: WebhookReceiver.available, Comment(rawValue: WebhookReceiver.skipMessage)))
struct WebhookSignatureTests {
    func post(_ receiver: WebhookReceiver, id: String, timestamp: Int, signedBody: [UInt8], sentBody: [UInt8]? = nil, signer: WebhookSigner,
              signedID: String? = nil, sentTimestamp: Int? = nil) throws {
        let headers = try signer.headers(id: signedID ?? id, timestamp: timestamp, body: signedBody)
            .map { $0.0 == "webhook-id" ? ($0.0, id) : $0 }
            .map { $0.0 == "webhook-timestamp" ? ($0.0, String(sentTimestamp ?? timestamp)) : $0 }
        let response = try HTTPClient(timeoutSeconds: 30).send("POST", receiver.url, headers: headers, body: sentBody ?? signedBody)
        #expect(response.status == 200)
    }

    @Test func everySecretAndKeySignsAndTamperingIsCaught() throws {
        let (old, oldBytes) = WebhookReceiver.newSecret()
        let (new, newBytes) = WebhookReceiver.newSecret()
        let oldKey = try PrivateKey.generateEd25519(), newKey = try PrivateKey.generateEd25519()
        let signer = WebhookSigner(secrets: [oldBytes, newBytes], signingKeys: [oldKey, newKey])
        #expect(signer.publicKeys.count == 2)
        // The receiver knows only the newer secret and the newer key: a rotation in progress.
        let receiver = try WebhookReceiver(secrets: [new], publicKey: try #require(signer.publicKeys.last))
        defer { receiver.stop() }
        let body = Array(#"{"specversion":"1.0","id":"8c3f","type":"veridoc.verification.completed.v1","data":{"verdict":"verified"}}"#.utf8)
        let now = Int(Date().timeIntervalSince1970)
        try post(receiver, id: "good", timestamp: now, signedBody: body, signer: signer)
        try post(receiver, id: "body", timestamp: now, signedBody: body, sentBody: body + [0x20], signer: signer)
        try post(receiver, id: "id", timestamp: now, signedBody: body, signer: signer, signedID: "other")
        try post(receiver, id: "old", timestamp: now - 3_600, signedBody: body, signer: signer)
        try post(receiver, id: "time", timestamp: now, signedBody: body, signer: signer, sentTimestamp: now + 1)
        let seen = receiver.requests(within: 30) { $0.count == 5 }
        let byID = Dictionary(seen.map { ($0.id, $0) }) { $1 }
        #expect(byID["good"]?.verified == true && byID["good"]?.verifiedEd25519 == true, "\(seen)")
        #expect(byID["good"]?.signature.split(separator: " ").count == 4, "v1 under each secret and v1a under each key")
        #expect(byID["body"]?.verified == false && byID["body"]?.verifiedEd25519 == false)
        #expect(byID["id"]?.verified == false && byID["id"]?.verifiedEd25519 == false)
        #expect(byID["old"]?.verified == false, "standardwebhooks refuses a timestamp an hour old")
        #expect(byID["time"]?.verified == false && byID["time"]?.verifiedEd25519 == false, "a timestamp other than the signed one")
        // Only the older secret and key: once they are removed, the newer ones' signatures are no use to this receiver.
        let other = try WebhookReceiver(secrets: [old], publicKey: try #require(signer.publicKeys.first))
        defer { other.stop() }
        try post(other, id: "rotated", timestamp: now, signedBody: body, signer: WebhookSigner(secrets: [newBytes], signingKeys: [newKey]))
        let rotated = other.requests(within: 30) { $0.count == 1 }.first
        #expect(rotated?.verified == false && rotated?.verifiedEd25519 == false)
    }

    @Test func theTransportNeverFollowsRedirectsReadsLittleAndRefusesPrivateAddresses() throws {
        let receiver = try WebhookReceiver(secrets: [WebhookReceiver.newSecret().text], answers: ["302", "huge", "slow:5"])
        defer { receiver.stop() }
        let client = HTTPClient(timeoutSeconds: 2, connectTimeoutSeconds: 1, maxResponseBytes: 1_024, overflow: .truncate)
        let redirect = try client.send("POST", receiver.url, body: [1])
        #expect(redirect.status == 302 && redirect.headers["location"] != nil)
        let huge = try client.send("POST", receiver.url, body: [2])
        #expect(huge.status == 200 && huge.truncated && huge.body.count == 1_024)
        #expect(throws: HTTPClient.Failure.timeout) { try client.send("POST", receiver.url, body: [3]) }
        var strict = client
        strict.addresses = .publicOnly
        #expect(throws: HTTPClient.Failure.addressRefused) { try strict.send("POST", receiver.url, body: [4]) }
        #expect(receiver.requests(within: 10) { $0.count == 3 }.count == 3, "the refused one never arrived")
    }
}
