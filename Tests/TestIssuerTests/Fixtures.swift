import Crypto
import Foundation
import MDoc
import TestIssuer
import Verification

/// A fixed verification time and seeded factories, so every run builds the
/// same element values, nonces and ids (keys still come from OpenSSL).
enum Fixtures {
    /// 2025-06-15T14:13:20Z.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func factory(curve: Curve = .p256, seed: UInt64 = 1) throws -> TestIssuer.EventFactory {
        try TestIssuer.EventFactory(curve: curve, now: now, seed: seed)
    }

    /// A seeded factory, its verifier, and one valid event of `flow`: where most tests start.
    static func world(seed: UInt64, flow: Flow) throws -> (factory: TestIssuer.EventFactory, verifier: Verifier, event: TestIssuer.GeneratedEvent) {
        var factory = try factory(seed: seed)
        let verifier = try factory.verifier()
        let event = try factory.event(flow)
        return (factory, verifier, event)
    }

    static func verify(_ event: TestIssuer.GeneratedEvent, with verifier: Verifier) -> VerificationResult {
        verifier.verify(eventJSON: event.json(), at: now)
    }

    /// Each flow's event with `fault`, verified by `factory`'s verifier.
    static func verifyEach(_ fault: TestIssuer.Fault, from factory: inout TestIssuer.EventFactory) throws -> [(flow: Flow, result: VerificationResult)] {
        let verifier = try factory.verifier()
        return try fault.flows.map { flow in (flow, verify(try factory.event(flow, fault: fault), with: verifier)) }
    }
}

extension VerificationResult {
    var codes: [ReasonCode] { report.reasons.map(\.code) }
}
