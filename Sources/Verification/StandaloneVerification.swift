import Foundation
import Settings

/// One event judged under a config file as the worker judges it, without
/// the database: `veridoc verify`, and the schema examples made with it.
/// Issued nonces are checked where the config names the replay key, and a
/// verified outcome carries sealed claims where the tenant names an outcome
/// recipient key, as the worker's outcome events do.
public struct StandaloneVerification: Sendable {
    public let configuration: Configuration
    public let time: Date
    private let verifier: Verifier

    public init(configFile: URL, at time: Date) throws(ConfigError) {
        let settings = try VeridocSettings.load(from: configFile)
        configuration = try Configuration.load(settings, at: time)
        let issuedNonces = settings.replay.nonceKeyFile == nil ? nil : IssuedNonce.Key(replayKey: try ReplayKey.load(settings))
        verifier = Verifier(directory: configuration.directory, issuedNonceKey: issuedNonces)
        self.time = time
    }

    public func verify(eventJSON: [UInt8]) -> VerificationResult {
        verifier.verify(eventJSON: eventJSON, at: time)
    }

    /// The outcome event the worker would publish for `result`.
    public func outcome(of result: VerificationResult) -> OutcomeEvent {
        OutcomeEvent(result, claimsRecipient: result.tenant.flatMap { configuration.directory[$0]?.outcomeRecipientKey })
    }
}

extension OutcomeEvent {
    /// The outcome event's JSON for `eventJSON` judged under `configFile` at `at`.
    public static func verifying(_ eventJSON: [UInt8], configFile: URL, at: Date) throws(ConfigError) -> [UInt8] {
        let verification = try StandaloneVerification(configFile: configFile, at: at)
        return Array(verification.outcome(of: verification.verify(eventJSON: eventJSON)).json().utf8)
    }
}
