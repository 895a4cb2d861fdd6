import Foundation
import Settings

/// One event judged under a config file as the worker judges it, without
/// the database: `veridoc verify`, and the schema examples made with it.
/// Issued nonces are checked where the config names the replay key, and a
/// verified outcome carries sealed claims where the tenant names an outcome
/// recipient key, as the worker's outcome events do.
public struct StandaloneVerification: Sendable {
    public let tenants: TenantDirectory
    public let time: Date
    private let verifier: Verifier
    private let statusResolver: StatusResolver?

    /// Answers status queries (one answer each, in order), waiting for
    /// them: the status service's `resolve`. Without one, a document whose
    /// MSO names a list is undetermined.
    public typealias StatusResolver = @Sendable ([StatusQuery], Date) -> [CredentialStatus]

    public init(configFile: URL, at time: Date) throws(ConfigError) {
        let settings = try VeridocSettings.load(from: configFile)
        self.init(tenants: try Configuration.load(settings, at: time).directory,
                  replayKey: try ReplayKey.loadIfNamed(settings), at: time)
    }

    /// With a deployment's tenants and replay key, already loaded.
    public init(tenants: TenantDirectory, replayKey: [UInt8]?, at time: Date, statusResolver: StatusResolver? = nil) {
        self.tenants = tenants
        self.statusResolver = statusResolver
        verifier = Verifier(directory: tenants, issuedNonceKey: replayKey.map { IssuedNonce.Key(replayKey: $0) })
        self.time = time
    }

    public func verify(eventJSON: [UInt8]) -> VerificationResult {
        verifier.verify(eventJSON: eventJSON, at: time).resolvingStatus(with: statusResolver.map { resolver in { resolver($0, time) } })
    }

    /// The outcome event the worker would publish for `result`.
    public func outcome(of result: VerificationResult) -> OutcomeEvent {
        OutcomeEvent(result, claimsRecipient: result.tenant.flatMap { tenants[$0]?.outcomeRecipientKey })
    }
}

extension OutcomeEvent {
    /// The outcome event's JSON for `eventJSON` judged under `configFile` at `at`.
    public static func verifying(_ eventJSON: [UInt8], configFile: URL, at: Date) throws(ConfigError) -> [UInt8] {
        let verification = try StandaloneVerification(configFile: configFile, at: at)
        return Array(verification.outcome(of: verification.verify(eventJSON: eventJSON)).json().utf8)
    }
}
