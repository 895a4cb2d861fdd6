import MDoc
import Settings

/// Apple's test conditions (docs/test-mode.md): the mock responses the Simulator and Apple's
/// developer profiles return. Only a tenant configured with `testConditions`
/// classifies responses by these shapes; every outcome of such a tenant is
/// marked as a test (`Assurance.test`) and never reads as production.
public enum TestKind: String, Sendable, CaseIterable {
    /// The iOS Simulator (PassKit in-app): encrypted to Apple's test key with
    /// team ID `PassKit_Identity_Test_Team_ID`, issuer and device signatures
    /// all zero bytes, no issuer certificate.
    case simulator
    /// Wallet's "Developer Integrator" or ProximityReader's "Mobile Document
    /// Reader (Developer)" profile on a device: a real device signature, an
    /// issuer signature that is either zero bytes or made under a test root.
    case developerProfile = "developer-profile"

    /// The Team ID Apple's Simulator puts in the session transcript.
    public static let simulatorTeamID = "PassKit_Identity_Test_Team_ID"

    /// The kind a config file's `testConditions.kinds` names.
    public init(_ kind: TenantSettings.TestConditions.Kind) {
        switch kind {
        case .simulator: self = .simulator
        case .developerProfile: self = .developerProfile
        }
    }
}

/// A test tenant's conditions: the kinds of mock response it accepts.
public struct TestConditions: Sendable, Equatable {
    public let kinds: Set<TestKind>

    public init(kinds: Set<TestKind>) {
        self.kinds = kinds
    }
}

/// Which assurance an outcome carries. Production outcomes are unchanged
/// (no `assurance` member); every outcome of a test tenant carries
/// `{"level": "test", "kind": …}` and a `test_` verdict.
public enum Assurance: Sendable, Equatable {
    case production
    /// `kind` is nil when the response was rejected before it could be
    /// classified, or when its shape matched none of the tenant's kinds.
    case test(kind: TestKind?)

    public var isTest: Bool { if case .test = self { true } else { false } }

    /// The test kind, when a test response was classified.
    public var kind: TestKind? { if case .test(let kind) = self { kind } else { nil } }
}

/// How a test tenant treats one document: which kind of mock response it is,
/// and which checks do not apply to it.
struct TestShape: Equatable {
    let kind: TestKind
    /// The issuer checks (chain, certificate, signature) are reported
    /// `not_applicable`: the issuer signature is zero bytes.
    let issuerNotApplicable: Bool
    /// The device check is reported `not_applicable`: the device signature is zero bytes.
    let deviceNotApplicable: Bool

    var notApplicable: Set<CheckName> {
        var names: Set<CheckName> = []
        if issuerNotApplicable { names.formUnion([.issuerChain, .issuerCertificate, .issuerSignature, .issuerAuthority]) }
        if deviceNotApplicable { names.insert(.deviceAuthentication) }
        return names
    }

    /// The shape of `document` for a tenant with `conditions`, or nil when it
    /// is none of the enabled kinds (its checks then run as for any tenant).
    ///
    /// - simulator: apple-wallet-app, the tenant's team ID is Apple's test one,
    ///   issuer signature zero bytes, no x5chain, device signature zero bytes.
    /// - developer profile: any flow, a device signature or MAC that is not
    ///   zero bytes; an issuer signature of zero bytes makes the issuer checks
    ///   not applicable, any other is checked against the tenant's test anchors.
    ///
    /// Any other mix (a zero device signature beside a real issuer signature,
    /// a zero issuer signature with an x5chain in a simulator response) is no
    /// shape: its checks run and reject it.
    static func classify(_ document: Document, flow: Flow, teamID: String?, conditions: TestConditions) -> TestShape? {
        let issuerAuth = document.issuerSigned.issuerAuth
        let issuerZero = isZero(issuerAuth.signature)
        let deviceZero: Bool
        switch document.deviceSigned?.authentication {
        case .signature(let signature)?: deviceZero = isZero(signature.signature)
        case .mac?: deviceZero = false
        case nil: return nil
        }
        if conditions.kinds.contains(.simulator), flow == .appleWalletApp, teamID == TestKind.simulatorTeamID,
           issuerZero, deviceZero, !issuerAuth.hasX5chainHeader {
            return TestShape(kind: .simulator, issuerNotApplicable: true, deviceNotApplicable: true)
        }
        if conditions.kinds.contains(.developerProfile), !deviceZero {
            return TestShape(kind: .developerProfile, issuerNotApplicable: issuerZero, deviceNotApplicable: false)
        }
        return nil
    }

    /// A signature of one or more bytes, all zero: what Apple's test devices send for "no signature".
    static func isZero(_ signature: ArraySlice<UInt8>) -> Bool {
        !signature.isEmpty && signature.allSatisfy { $0 == 0 }
    }
}
