import Crypto
import Testing

/// The memo of verified signatures answers exactly as verification did: a
/// signature seen verified is found again; anything that differs in digest,
/// signature or key is verified afresh; failures are never remembered; and
/// the memo stays within its capacity, the oldest going first.
@Suite struct TrustedSignaturesTests {
    static let message = Array("Signature1 over an MSO".utf8)

    @Test func aSignatureSeenVerifiedIsAHitAndNothingElseIs() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let other = try PrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: Self.message, hash: .sha256)
        let verifier = TrustedSignatures(memo: VerifiedSignatureMemo(capacity: 8), tables: SignatureVerifierCache(capacity: 0))

        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: key.publicKey))
        let first = verifier.memo.statistics
        #expect(first.entries == 1 && first.hits == 0 && first.misses == 1)
        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: key.publicKey))
        #expect(verifier.memo.statistics.hits == 1, "the same signature again is answered from the memo")

        // Each input differs from the remembered one in one way: each is verified, and fails.
        var flipped = signature
        flipped[5] ^= 0x01
        #expect(!verifier.isValidSignature(flipped, for: Self.message, hash: .sha256, key: key.publicKey))
        #expect(!verifier.isValidSignature(signature, for: Self.message + [0], hash: .sha256, key: key.publicKey))
        #expect(!verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: other.publicKey))
        #expect(!verifier.isValidSignature(signature, for: Self.message, hash: .sha384, key: key.publicKey))
        let statistics = verifier.memo.statistics
        #expect(statistics.hits == 1 && statistics.misses == 5 && statistics.entries == 1, "failures are not remembered: \(statistics)")
    }

    @Test func theMemoKeepsItsCapacityOldestFirst() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let memo = VerifiedSignatureMemo(capacity: 4)
        let verifier = TrustedSignatures(memo: memo, tables: SignatureVerifierCache(capacity: 0))
        let messages = (0..<6).map { Array("message \($0)".utf8) }
        let signatures = try messages.map { try key.signature(for: $0, hash: .sha256) }
        for (message, signature) in zip(messages, signatures) {
            #expect(verifier.isValidSignature(signature, for: message, hash: .sha256, key: key.publicKey))
        }
        #expect(memo.statistics.entries == 4 && memo.statistics.evictions == 2)
        let point = try #require(key.publicKey.uncompressedPoint)
        func remembered(_ index: Int) -> Bool {
            memo.contains(.init(digest: HashAlgorithm.sha256.hash(messages[index]), signature: signatures[index], point: point))
        }
        #expect(!remembered(0) && !remembered(1), "the two oldest went")
        #expect((2..<6).allSatisfy(remembered))
    }

    @Test func aMemoOfNoEntriesRemembersNothingAndAResetForgets() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: Self.message, hash: .sha256)
        let memo = VerifiedSignatureMemo(capacity: 4)
        let verifier = TrustedSignatures(memo: memo, tables: SignatureVerifierCache(capacity: 0))
        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: key.publicKey))
        #expect(memo.statistics.entries == 1)
        memo.reset(capacity: 0)
        #expect(memo.capacity == 0 && memo.statistics.entries == 0)
        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: key.publicKey), "still verified, the ordinary way")
        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: key.publicKey))
        #expect(memo.statistics.entries == 0 && memo.statistics.hits == 0)
    }

    @Test func entriesSeparateTheirPartsByLength() {
        // The same bytes split differently between digest, signature and point are different entries.
        let a = VerifiedSignatureMemo.Entry(digest: [1, 2], signature: [3], point: [4])
        let b = VerifiedSignatureMemo.Entry(digest: [1], signature: [2, 3], point: [4])
        let memo = VerifiedSignatureMemo(capacity: 2)
        memo.remember(a)
        #expect(memo.contains(a))
        #expect(!memo.contains(b))
    }

    @Test func aP384KeyAndAnEd25519KeyAreVerifiedToo() throws {
        let verifier = TrustedSignatures(memo: VerifiedSignatureMemo(capacity: 8), tables: SignatureVerifierCache(capacity: 0))
        let p384 = try PrivateKey.generate(curve: .p384)
        let signature384 = try p384.signature(for: Self.message, hash: .sha384)
        #expect(verifier.isValidSignature(signature384, for: Self.message, hash: .sha384, key: p384.publicKey))
        #expect(verifier.isValidSignature(signature384, for: Self.message, hash: .sha384, key: p384.publicKey))
        #expect(verifier.memo.statistics.hits == 1)
        let ed25519 = try PrivateKey.generateEd25519()
        let signature = try ed25519.signature(for: Self.message, hash: .sha256)
        #expect(verifier.isValidSignature(signature, for: Self.message, hash: .sha256, key: ed25519.publicKey))
        var flipped = signature
        flipped[0] ^= 1
        #expect(!verifier.isValidSignature(flipped, for: Self.message, hash: .sha256, key: ed25519.publicKey))
    }
}
