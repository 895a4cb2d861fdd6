/// Veridoc's own fixture factory: issuing authorities, merchants (tenants),
/// holders with mDL credentials, and complete `veridoc.verification.requested.v1`
/// events for the three flows, valid or with one chosen defect (`Fault`).
///
/// Everything is generated at run time, so no key or certificate is ever
/// committed. Keys come from OpenSSL's CSPRNG; element values, salts, nonces
/// and ids come from a `SeededRandom`, so a corpus built from one seed has the
/// same structure and contents every time (only keys and signatures differ).
///
/// The tests, the demo and the load generator all use it, so it builds
/// realistic, spec-shaped structures, never shortcuts a verifier would not see.
public enum TestIssuer {
    /// Why a fixture could not be built (a wrong combination of options, never a verification outcome).
    public struct FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }
}
