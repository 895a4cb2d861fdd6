import Crypto
import Testing

/// `PrecomputedVerificationKey` writes ECDSA's verification equation out by
/// hand; it must give `ECDSA_do_verify`'s answer (`PublicKey.isValidSignature
/// (_:digest:)`) on every input. Any disagreement is a bug in the former.
@Suite struct FixedBaseVerifierTests {
    /// A key whose scalar is known (the crafted cases need it).
    static func randomFixture() throws -> ECDSAEdgeCases {
        while true {
            // A 32-byte string is ≥ n with probability about 2⁻³²; draw again then.
            if let fixture = try? ECDSAEdgeCases(scalar: secureRandomBytes(32)) { return fixture }
        }
    }

    /// Digest lengths: SHA-256's, and shorter (taken whole) and longer (truncated to 32 bytes) ones.
    static let digestLengths = [32, 32, 32, 0, 1, 20, 31, 33, 48, 64]

    @Test func agreesWithOpenSSLOverRandomKeysDigestsAndEdgeCases() throws {
        let keyCount = 16, digestsPerKey = 25, randomSignaturesPerDigest = 4
        var verdicts: [String: (accepted: Int, rejected: Int)] = [:]
        var comparisons = 0
        func compare(_ name: String, _ table: PrecomputedVerificationKey, _ key: PublicKey, _ signature: [UInt8], _ digest: [UInt8],
                     expected: Bool? = nil) {
            let reference = key.isValidSignature(signature, digest: digest)
            let fixed = table.isValidSignature(signature, digest: digest)
            comparisons += 1
            #expect(fixed == reference, "\(name): fixed-base \(fixed), OpenSSL \(reference), digest \(digest.count) bytes")
            if let expected { #expect(reference == expected, "\(name): OpenSSL \(reference), expected \(expected)") }
            verdicts[name, default: (0, 0)].accepted += reference ? 1 : 0
            verdicts[name, default: (0, 0)].rejected += reference ? 0 : 1
        }

        var previous: (fixture: ECDSAEdgeCases, table: PrecomputedVerificationKey)?
        for _ in 0..<keyCount {
            let fixture = try Self.randomFixture()
            let table = try PrecomputedVerificationKey(fixture.publicKey)
            for index in 0..<digestsPerKey {
                let digest = secureRandomBytes(Self.digestLengths[index % Self.digestLengths.count])
                for edge in fixture.cases(digest: digest, nonce: secureRandomBytes(32)) {
                    compare(edge.name, table, fixture.publicKey, edge.signature, edge.digest, expected: edge.isValid)
                    if let other = previous {
                        compare("other key: \(edge.name)", other.table, other.fixture.publicKey, edge.signature, edge.digest, expected: false)
                    }
                }
                for _ in 0..<randomSignaturesPerDigest {
                    compare("random r ‖ s", table, fixture.publicKey, secureRandomBytes(64), digest)
                    // Random r and s below n (the top bit clear keeps both < n).
                    var inRange = secureRandomBytes(64)
                    inRange[0] &= 0x7f
                    inRange[32] &= 0x7f
                    compare("random r ‖ s < n", table, fixture.publicKey, inRange, digest, expected: false)
                }
                for length in [0, 1, 63, 65, 128] {
                    compare("signature of \(length) bytes", table, fixture.publicKey, secureRandomBytes(length), digest, expected: false)
                }
            }
            previous = (fixture, table)
        }
        // Every case was reached, with the verdict expected of it.
        for name in ["valid", "high-S (n - s)", "digest 0 (u1 = 0)", "digest n (u1 = 0)", "digest 2^256 - 1", "u1·G = u2·Q (doubling)", "small s"] {
            #expect(verdicts[name]?.accepted == keyCount * digestsPerKey, "\(name)")
        }
        for name in ["r = 0", "s = 0", "r = n", "s = n", "r = n + 1", "s = n + 1", "r = 2^256 - 1", "s = 2^256 - 1",
                     "small s + n", "wrong digest", "R at infinity", "r and s swapped"] {
            #expect((verdicts[name]?.rejected ?? 0) > 0 && verdicts[name]?.accepted == 0, "\(name)")
        }
        let summary = verdicts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.accepted) accepted, \($0.value.rejected) rejected" }
        print("fixed-base differential: \(comparisons) comparisons over \(keyCount) keys\n  " + summary.joined(separator: "\n  "))
    }

    /// The table answers for its own key only, whatever the key's form.
    @Test func keysFromEveryFormBuildTheSameTable() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let message = Array("mso".utf8)
        let signature = try key.signature(for: message, hash: .sha256)
        let fromSPKI = try PublicKey(spki: key.publicKey.spki)
        let tables = try [key.publicKey, fromSPKI].map { try PrecomputedVerificationKey($0) }
        #expect(tables[0].fingerprint == tables[1].fingerprint)
        #expect(tables[0].fingerprint == sha256(try #require(key.publicKey.uncompressedPoint)))
        for table in tables {
            #expect(table.isValidSignature(signature, for: message, hash: .sha256))
            #expect(!table.isValidSignature(signature, for: message + [0], hash: .sha256))
            #expect(!table.isValidSignature(signature, for: message, hash: .sha384))
        }
    }

    @Test func onlyP256KeysHaveTables() throws {
        for key in try [PrivateKey.generate(curve: .p384).publicKey, PrivateKey.generate(curve: .p521).publicKey,
                        PrivateKey.generateEd25519().publicKey] {
            #expect(throws: CryptoError.unsupported("fixed-base verification is for P-256 keys")) {
                try PrecomputedVerificationKey(key)
            }
        }
    }
}
