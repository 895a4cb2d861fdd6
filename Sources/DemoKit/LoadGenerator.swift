import Foundation
import TestIssuer
import Verification

/// Synthetic verification requests for demos, benchmarks and staging: events
/// of all three flows from the project's own test issuer, mixed with the
/// defects real traffic has (tampered, expired, replayed, malformed,
/// redelivered, poison records) in chosen proportions.
public struct LoadGenerator: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case valid
        case expired
        case stale
        case tampered
        case wrongKey
        case untrusted
        case malformed
        case replayed
        case redelivered
        case poison
    }

    /// Relative weights of each kind.
    public struct Mix: Sendable {
        public var weights: [(Kind, Int)]

        public static let realistic = Mix(weights: [
            (.valid, 800), (.expired, 30), (.stale, 30), (.tampered, 40), (.wrongKey, 15), (.untrusted, 15),
            (.malformed, 25), (.replayed, 20), (.redelivered, 20), (.poison, 5),
        ])
        public static let valid = Mix(weights: [(.valid, 1)])
        /// Mostly valid Apple in-app events, as the benchmark corpus.
        public static let benchmark = Mix(weights: [(.valid, 1)])

        public init(weights: [(Kind, Int)]) { self.weights = weights }

        /// `realistic`, `valid`, or `kind=weight,…` (e.g. `valid=90,tampered=10`).
        public static func parse(_ text: String) -> Mix? {
            switch text {
            case "realistic": return .realistic
            case "valid": return .valid
            default:
                var weights: [(Kind, Int)] = []
                for part in text.split(separator: ",") {
                    let pair = part.split(separator: "=")
                    guard pair.count == 2, let kind = Kind(rawValue: String(pair[0])), let weight = Int(pair[1]), weight >= 0 else { return nil }
                    weights.append((kind, weight))
                }
                return weights.isEmpty ? nil : Mix(weights: weights)
            }
        }
    }

    /// One record to produce.
    public struct Record: Sendable {
        public let key: [UInt8]
        public let value: [UInt8]
        /// The event id, when the record has one.
        public let id: String?
        public let kind: Kind
        public let flow: Flow?

        package init(key: [UInt8], value: [UInt8], id: String?, kind: Kind, flow: Flow?) {
            self.key = key
            self.value = value
            self.id = id
            self.kind = kind
            self.flow = flow
        }
    }

    public var factory: TestIssuer.EventFactory
    public let mix: Mix
    /// Flows of valid events: mostly Apple in-app, as Verify with Wallet traffic is.
    public var flowWeights: [(Flow, Int)] = [(.appleWalletApp, 60), (.appleWalletWeb, 25), (.isoDeviceResponse, 15)]
    /// The share of valid events that present the credential of the event
    /// before again (the same MSO, a new device signature), as people
    /// proving their age to the same business again do.
    public var repeatShare = 0.0
    private var random: TestIssuer.SeededRandom
    private var recentApple: [TestIssuer.GeneratedEvent] = []
    private var recentRecords: [Record] = []
    private var sequence = 0

    public init(factory: TestIssuer.EventFactory, mix: Mix, seed: UInt64) {
        self.factory = factory
        self.mix = mix
        random = TestIssuer.SeededRandom(seed: seed)
    }

    public mutating func next() throws -> Record {
        sequence += 1
        let key = Array("session-\(sequence % 64)".utf8)
        let kind = pick(mix.weights)
        switch kind {
        case .valid:
            let flow = pick(flowWeights)
            var options = TestIssuer.EventOptions()
            options.deviceMac = flow == .isoDeviceResponse && sequence % 2 == 0
            options.recipient = sequence % 10 == 0 ? .rotated : .current
            options.presentAgain = repeatShare > 0 && Double(random.next() % 10_000) < repeatShare * 10_000
            options.requestedElements = [
                RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "age_over_21", retention: .willNotStore),
                RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "family_name", retention: .mayStore(days: 30)),
            ]
            let event = try factory.event(flow, options: options)
            if flow == .appleWalletApp {
                recentApple.append(event)
                if recentApple.count > 32 { recentApple.removeFirst() }
            }
            return remember(Record(key: key, value: event.json(), id: event.id, kind: kind, flow: flow))
        case .expired: return try faulty(.msoExpired, kind, key)
        case .stale: return try faulty(.staleRequest, kind, key)
        case .tampered: return try faulty(sequence % 2 == 0 ? .alteredElement : .flippedIssuerSignature, kind, key)
        case .wrongKey: return try faulty(.unknownRecipientKey, kind, key)
        case .untrusted: return try faulty(.untrustedIssuer, kind, key)
        case .malformed: return try faulty(sequence % 2 == 0 ? .garbagePayload : .malformedBase64, kind, key)
        case .replayed:
            // The same response and nonce under a new event id: a replay.
            guard var original = recentApple.randomElement(using: &random) else { return try faulty(.msoExpired, .expired, key) }
            original.attributes["id"] = "replay-\(sequence)-\(original.id ?? "")"
            return remember(Record(key: key, value: original.json(), id: original.id, kind: kind, flow: .appleWalletApp))
        case .redelivered:
            // The same event again (a producer retry): not a replay, one result.
            guard let earlier = recentRecords.last(where: { $0.kind == .valid }) else { return try next() }
            return Record(key: earlier.key, value: earlier.value, id: earlier.id, kind: kind, flow: earlier.flow)
        case .poison:
            return Record(key: key, value: [0xff, 0xfe] + Array("not an event".utf8), id: nil, kind: kind, flow: nil)
        }
    }

    private mutating func faulty(_ fault: TestIssuer.Fault, _ kind: Kind, _ key: [UInt8]) throws -> Record {
        let flows = fault.flows
        let flow = flows.contains(.appleWalletApp) ? (sequence % 3 == 0 ? flows[sequence % flows.count] : .appleWalletApp) : flows[0]
        let event = try factory.event(flow, fault: fault)
        return remember(Record(key: key, value: event.json(), id: event.id, kind: kind, flow: flow))
    }

    private mutating func remember(_ record: Record) -> Record {
        recentRecords.append(record)
        if recentRecords.count > 16 { recentRecords.removeFirst() }
        return record
    }

    private mutating func pick<T>(_ weights: [(T, Int)]) -> T {
        let total = weights.reduce(0) { $0 + $1.1 }
        var roll = Int(random.next() % UInt64(max(total, 1)))
        for (value, weight) in weights {
            if roll < weight { return value }
            roll -= weight
        }
        return weights[0].0
    }
}
