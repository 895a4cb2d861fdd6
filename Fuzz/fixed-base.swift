// libFuzzer target: the fixed-base P-256 ECDSA verifier (issue 27 §1,
// `PrecomputedVerificationKey`) against OpenSSL's `ECDSA_do_verify`
// (`PublicKey.isValidSignature(_:digest:)`). The verifier writes the
// verification equation out by hand, so any disagreement traps.
//
// Input: byte 0 picks one of eight keys (a table is built once per key: a
// build takes ~30 ms, per input it would leave a few dozen executions a
// second); byte 1 the mode; byte 2 the digest's length (mod 65); then the
// digest, r and s (32 bytes each; missing bytes are zero).
//   mode even — the input's r ‖ s, with this key and with the next one;
//   mode odd  — the crafted cases of `ECDSAEdgeCases` for the digest, with
//               r ‖ s as the nonce: valid, high-S, out of range, R at
//               infinity, u1·G = u2·Q, …; each must also get the answer
//               the case expects.
// A trap names the key, the mode and the case; fuzz inputs only.
import Crypto

private let keyCount = 8

/// The keys' scalars are fixed (SHA-256 of a label, below n), so findings reproduce.
private let fixtures: [(cases: ECDSAEdgeCases, table: PrecomputedVerificationKey)] = (0..<keyCount).map { index in
    do {
        let cases = try ECDSAEdgeCases(scalar: sha256(Array("veridoc fixed-base fuzz key \(index)".utf8)))
        return (cases, try PrecomputedVerificationKey(cases.publicKey))
    } catch {
        fatalError("fixed-base: key \(index): \(error)")
    }
}

enum Target: FuzzTarget {
    static let name: StaticString = "fixed-base"

    static func prepare() { _ = fixtures.count }

    static func run(_ input: [UInt8]) {
        guard input.count >= 3 else { return }
        let keyIndex = Int(input[0]) % keyCount
        let mode = input[1]
        let digestLength = Int(input[2]) % 65
        var rest = Array(input[3...])
        if rest.count < digestLength + 64 { rest += [UInt8](repeating: 0, count: digestLength + 64 - rest.count) }
        let digest = Array(rest[..<digestLength])
        let signature = Array(rest[digestLength..<(digestLength + 64)])

        if mode % 2 == 0 {
            check(keyIndex, "input r ‖ s", signature, digest, expected: nil)
            check((keyIndex + 1) % keyCount, "input r ‖ s, next key", signature, digest, expected: nil)
        } else {
            for edge in fixtures[keyIndex].cases.cases(digest: digest, nonce: signature) {
                check(keyIndex, edge.name, edge.signature, edge.digest, expected: edge.isValid)
            }
        }
    }
}

private func check(_ keyIndex: Int, _ name: String, _ signature: [UInt8], _ digest: [UInt8], expected: Bool?) {
    let fixture = fixtures[keyIndex]
    let reference = fixture.cases.publicKey.isValidSignature(signature, digest: digest)
    let fixed = fixture.table.isValidSignature(signature, digest: digest)
    guard fixed == reference, expected.map({ $0 == reference }) ?? true else {
        fatalError("fixed-base: key \(keyIndex), \(name): fixed-base \(fixed), OpenSSL \(reference), expected \(expected.map(String.init) ?? "either")")
    }
}
