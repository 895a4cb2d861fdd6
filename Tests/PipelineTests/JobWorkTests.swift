import Crypto
import Foundation
import Kafka
@testable import Pipeline
import Observability
import Postgres
import Retention
import TestIssuer
import Testing
import TestSupport
@testable import Verification

/// What a pool thread hands the persister: the write prepared ahead, and
/// no element value left in the result once the write holds it sealed.
@Suite struct JobWorkTests {
    static let ns = TestIssuer.Credential.mDLNameSpace

    struct Setup {
        var factory: TestIssuer.EventFactory
        let work: JobWork
        let keys: DataKeyRing
        let recipient: PrivateKey

        init() throws {
            factory = try TestIssuer.EventFactory(now: Date(), seed: 4242)
            let plain = try #require(try factory.verifier().directory[factory.merchant.tenantID])
            recipient = try PrivateKey.generate(curve: .p256)
            let tenant = Tenant(id: plain.id, merchantIDs: plain.merchantIDs, teamID: plain.teamID, keys: plain.keys,
                                trustAnchors: [factory.authority.iaca], origins: plain.origins, maxRequestAge: plain.maxRequestAge,
                                retention: plain.retention, outcomeRecipientKey: recipient.publicKey)
            let verifier = Verifier(directory: TenantDirectory([tenant]))
            keys = try DataKeyRing(keys: ["k1": Array(repeating: 9, count: 32)], activeID: "k1")
            work = JobWork(verifier: verifier, intake: RecordIntake(parser: verifier.eventParser),
                           retention: RetentionWriter(directory: verifier.directory, keys: keys), metrics: PipelineMetrics(),
                           log: Logger(minimum: .error))
        }

        func message(_ event: TestIssuer.GeneratedEvent) -> KafkaMessage {
            KafkaMessage(topicPartition: TopicPartition("veridoc.requests", 0), offset: 0, key: nil, value: event.json())
        }

        func completion(_ event: TestIssuer.GeneratedEvent) throws -> Completion {
            let tracker = PartitionTracker()
            let partition = TopicPartition("veridoc.requests", 0)
            tracker.assign(partition, startingAt: 0)
            let ticket = try #require(tracker.register(partition, offset: 0))
            guard case .completion(let completion) = work.complete(Job(ticket: ticket, key: nil, receivedAt: Date(), content: .unread(message(event)))) else {
                throw TestFailure("not a completion")
            }
            return completion
        }
    }

    static func names(_ result: VerificationResult) -> [String] {
        result.documents.flatMap(\.elements).map { "\($0.namespace)/\($0.identifier)" }
    }

    @Test func valuesSealedForTheWriteAreReleasedFromTheResult() throws {
        var setup = try Setup()
        var options = TestIssuer.EventOptions()
        options.requestedElements = [
            RequestedElement(namespace: Self.ns, element: "given_name", retention: .mayStore(days: 5)),
            RequestedElement(namespace: Self.ns, element: "family_name", retention: .willNotStore),
        ]
        let event = try setup.factory.event(.appleWalletApp, options: options)
        let disclosed = try #require(setup.factory.credential[Self.ns, "given_name"]).encoded()

        let direct = try setup.work.verified(event)
        #expect(direct.isVerified)
        #expect(direct.documents.flatMap(\.elements).allSatisfy { $0.value != nil })

        let completion = try setup.completion(event)
        let result = try #require(completion.result)
        #expect(result.isVerified)
        #expect(result.requestID == direct.requestID && result.replayToken == direct.replayToken)
        #expect(result.report.checks.map(\.name) == direct.report.checks.map(\.name))
        // Names stay (element rows, the outcome's list); values are gone.
        #expect(Self.names(result) == Self.names(direct))
        #expect(Self.names(result).count > 1)
        #expect(result.documents.flatMap(\.elements).allSatisfy { $0.value == nil })

        // The write still holds the requested value: sealed for storage …
        let prepared = try #require(completion.prepared)
        let rows = try #require(prepared.values).rows
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        let (eventID, namespace, element) = (row.eventID, row.namespace, row.element)
        let (keyID, nonce, ciphertext) = (row.keyID, row.nonce, row.ciphertext)
        #expect(element == "given_name")
        let opened = try ValueCipher.open(SealedValue(keyID: keyID, nonce: nonce, ciphertext: ciphertext),
                                          eventID: eventID, namespace: namespace, element: element, keys: setup.keys)
        #expect(opened == disclosed)

        // … and sealed to the integration in the outcome.
        let outcome = try #require(prepared.outcome)
        #expect(outcome.hasClaims)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(outcome.json.utf8)) as? [String: Any])
        let claims = try #require((json["data"] as? [String: Any])?["claims"] as? [String: Any])
        let plaintext = try OutcomeClaims.open(claims, requestID: try #require(result.requestID), recipient: setup.recipient)
        #expect(plaintext.firstRange(of: disclosed) != nil)
        // Encoding the released result again could not have sealed it.
        #expect(EncodedOutcome(result, retention: setup.work.retention).hasClaims == false)
        #expect(EncodedOutcome(direct, retention: setup.work.retention).hasClaims)
    }

    @Test func aRejectedResultKeepsItsNamesAndNoValues() throws {
        var setup = try Setup()
        let event = try setup.factory.event(.appleWalletApp, fault: .alteredElement)
        let direct = try setup.work.verified(event)
        #expect(!direct.isVerified && !direct.documents.isEmpty)

        let completion = try setup.completion(event)
        let result = try #require(completion.result)
        #expect(!result.isVerified)
        #expect(result.report.reasons.map(\.code) == direct.report.reasons.map(\.code))
        #expect(Self.names(result) == Self.names(direct))
        #expect(result.documents.flatMap(\.elements).allSatisfy { $0.value == nil })
        #expect(completion.prepared?.values?.rows.isEmpty == true)
    }
}

extension JobWork {
    /// The event read and verified as `complete` does, its values kept (a
    /// completion's are released once sealed).
    func verified(_ event: TestIssuer.GeneratedEvent) throws -> VerificationResult {
        let message = KafkaMessage(topicPartition: TopicPartition("veridoc.requests", 0), offset: 0, key: nil, value: event.json())
        guard case .event(.request(let request)) = intake.read(message) else { throw TestFailure("not a request") }
        return verifier.verify(request, at: Date())
    }
}
