/// HPKE (RFC 9180) base mode for the one suite Apple and ISO 18013-7 Annex C
/// use: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM. OpenSSL 3.0 has
/// no HPKE API, so this composes ECDH, labeled HKDF and AES-GCM.
public enum HPKE {
    /// Single-shot open (seq 0). `enc` is the 65-byte uncompressed ephemeral public key.
    public static func open(_ ciphertext: some Collection<UInt8>, encapsulatedKey enc: [UInt8], info: [UInt8], aad: [UInt8] = [], recipient: PrivateKey) throws(CryptoError) -> [UInt8] {
        var context = try setupBaseRecipient(encapsulatedKey: enc, recipient: recipient, info: info)
        return try context.open(ciphertext, aad: aad)
    }

    /// Single-shot seal; `ephemeral` lets tests fix skE (RFC vectors); nil = fresh key.
    public static func seal(_ plaintext: some Collection<UInt8>, info: [UInt8], aad: [UInt8] = [], recipient: PublicKey, ephemeral: PrivateKey? = nil) throws(CryptoError) -> (encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        var (enc, context) = try setupBaseSender(recipient: recipient, info: info, ephemeral: ephemeral)
        return (enc, try context.seal(plaintext, aad: aad))
    }

    public static func setupBaseSender(recipient: PublicKey, info: [UInt8], ephemeral: PrivateKey? = nil) throws(CryptoError) -> (encapsulatedKey: [UInt8], context: Context) {
        guard recipient.curve == .p256, let pkRm = recipient.uncompressedPoint else {
            throw .unsupported("HPKE recipient key must be P-256")
        }
        let skE: PrivateKey
        if let ephemeral { skE = ephemeral } else { skE = try PrivateKey.generate(curve: .p256) }
        guard skE.type == .ec(.p256), let enc = skE.publicKey.uncompressedPoint else {
            throw .unsupported("HPKE ephemeral key must be P-256")
        }
        let dh = try skE.sharedSecret(with: recipient)
        let sharedSecret = try extractAndExpand(dh: dh, kemContext: enc + pkRm)
        return (enc, try keySchedule(sharedSecret: sharedSecret, info: info))
    }

    public static func setupBaseRecipient(encapsulatedKey: [UInt8], recipient: PrivateKey, info: [UInt8]) throws(CryptoError) -> Context {
        guard recipient.type == .ec(.p256), let pkRm = recipient.publicKey.uncompressedPoint else {
            throw .unsupported("HPKE recipient key must be P-256")
        }
        // Rejects wrong lengths, compressed forms, off-curve points and infinity.
        let dh = try recipient.sharedSecret(withUncompressedPoint: encapsulatedKey)
        let sharedSecret = try extractAndExpand(dh: dh, kemContext: encapsulatedKey + pkRm)
        return try keySchedule(sharedSecret: sharedSecret, info: info)
    }

    /// RFC 9180 §7.1.3 DeriveKeyPair for P-256 (rejection sampling with the "candidate" label and counter, bitmask 0xff).
    public static func deriveKeyPair(inputKeyMaterial: [UInt8]) throws(CryptoError) -> PrivateKey {
        let dkpPRK = labeledExtract(kemSuiteID, salt: [], label: "dkp_prk", ikm: inputKeyMaterial)
        for counter in 0...255 {
            // Bitmask 0xff for P-256 leaves the candidate unchanged.
            let candidate = try labeledExpand(kemSuiteID, prk: dkpPRK, label: "candidate", info: [UInt8(counter)], length: 32)
            do {
                return try PrivateKey(curve: .p256, scalar: candidate)
            } catch .invalidKey {
                // Zero or ≥ the group order: draw the next candidate.
                continue
            }
        }
        throw .invalidInput("DeriveKeyPair found no valid scalar")
    }

    /// The key schedule result: one AEAD key, its nonce sequence and the exporter.
    public struct Context: Sendable {
        public let key: [UInt8]
        public let baseNonce: [UInt8]
        public private(set) var sequenceNumber: UInt64 = 0

        /// For tests: the values the key schedule produced.
        public let sharedSecret: [UInt8]
        public let keyScheduleContext: [UInt8]
        public let secret: [UInt8]

        public mutating func seal(_ plaintext: some Collection<UInt8>, aad: [UInt8]) throws(CryptoError) -> [UInt8] {
            let ciphertext = try AESGCM.seal(plaintext, key: key, nonce: try nextNonce(), authenticating: aad)
            sequenceNumber += 1
            return ciphertext
        }

        /// The sequence number advances only when the tag verifies, as RFC 9180 §5.2 requires.
        public mutating func open(_ ciphertext: some Collection<UInt8>, aad: [UInt8]) throws(CryptoError) -> [UInt8] {
            let plaintext = try AESGCM.open(ciphertext, key: key, nonce: try nextNonce(), authenticating: aad)
            sequenceNumber += 1
            return plaintext
        }

        /// Derived on demand from `secret` and the context, which the context
        /// keeps anyway: verification opens one message and never exports, and
        /// deriving it for every event would be a large part of the key schedule.
        public var exporterSecret: [UInt8] {
            get throws(CryptoError) {
                try labeledExpand(hpkeSuiteID, prk: secret, label: "exp", info: keyScheduleContext, length: hashByteCount)
            }
        }

        public func export(exporterContext: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
            try labeledExpand(hpkeSuiteID, prk: try exporterSecret, label: "sec", info: exporterContext, length: length)
        }

        /// base_nonce XOR I2OSP(seq, 12). A UInt64 counter stays below 2^96 − 1,
        /// so the RFC limit becomes "the counter must not wrap".
        private func nextNonce() throws(CryptoError) -> [UInt8] {
            guard sequenceNumber < UInt64.max else { throw .invalidInput("HPKE message limit reached") }
            var nonce = baseNonce
            for index in 0..<8 {
                nonce[nonce.count - 1 - index] ^= UInt8(truncatingIfNeeded: sequenceNumber >> (8 * UInt64(index)))
            }
            return nonce
        }
    }
}

// MARK: - RFC 9180 building blocks

private let kemSuiteID: [UInt8] = Array("KEM".utf8) + [0x00, 0x10]
private let hpkeSuiteID: [UInt8] = Array("HPKE".utf8) + [0x00, 0x10, 0x00, 0x01, 0x00, 0x01]
private let versionLabel: [UInt8] = Array("HPKE-v1".utf8)

private let keyByteCount = 16
private let nonceByteCount = 12
private let hashByteCount = 32

private func labeledExtract(_ suiteID: [UInt8], salt: [UInt8], label: String, ikm: [UInt8]) -> [UInt8] {
    var labeledIKM: [UInt8] = []
    labeledIKM.reserveCapacity(versionLabel.count + suiteID.count + label.utf8.count + ikm.count)
    labeledIKM += versionLabel
    labeledIKM += suiteID
    labeledIKM += label.utf8
    labeledIKM += ikm
    return HKDF.extract(.sha256, salt: salt, inputKeyMaterial: labeledIKM)
}

private func labeledExpand(_ suiteID: [UInt8], prk: [UInt8], label: String, info: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
    guard length >= 0, length <= 255 * hashByteCount else { throw .invalidInput("HPKE expand length out of range") }
    var labeledInfo: [UInt8] = []
    labeledInfo.reserveCapacity(2 + versionLabel.count + suiteID.count + label.utf8.count + info.count)
    labeledInfo.append(UInt8(length >> 8))
    labeledInfo.append(UInt8(length & 0xff))
    labeledInfo += versionLabel
    labeledInfo += suiteID
    labeledInfo += label.utf8
    labeledInfo += info
    return try HKDF.expand(.sha256, pseudoRandomKey: prk, info: labeledInfo, length: length)
}

/// DHKEM ExtractAndExpand (RFC 9180 §4.1).
private func extractAndExpand(dh: [UInt8], kemContext: [UInt8]) throws(CryptoError) -> [UInt8] {
    let eaePRK = labeledExtract(kemSuiteID, salt: [], label: "eae_prk", ikm: dh)
    return try labeledExpand(kemSuiteID, prk: eaePRK, label: "shared_secret", info: kemContext, length: hashByteCount)
}

/// LabeledExtract("", "psk_id_hash", "") — the same for every base-mode context.
private let emptyPSKIDHash = labeledExtract(hpkeSuiteID, salt: [], label: "psk_id_hash", ikm: [])

/// KeySchedule for mode_base (RFC 9180 §5.1): empty psk and psk_id.
private func keySchedule(sharedSecret: [UInt8], info: [UInt8]) throws(CryptoError) -> HPKE.Context {
    let modeBase: UInt8 = 0x00
    let pskIDHash = emptyPSKIDHash
    let infoHash = labeledExtract(hpkeSuiteID, salt: [], label: "info_hash", ikm: info)
    let context = [modeBase] + pskIDHash + infoHash
    let secret = labeledExtract(hpkeSuiteID, salt: sharedSecret, label: "secret", ikm: [])
    return HPKE.Context(
        key: try labeledExpand(hpkeSuiteID, prk: secret, label: "key", info: context, length: keyByteCount),
        baseNonce: try labeledExpand(hpkeSuiteID, prk: secret, label: "base_nonce", info: context, length: nonceByteCount),
        sharedSecret: sharedSecret,
        keyScheduleContext: context,
        secret: secret)
}
