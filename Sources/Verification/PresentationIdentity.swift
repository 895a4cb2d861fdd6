import Crypto

/// What makes a presentation one presentation: the holder's device
/// authenticated (signed or MACed) DeviceAuthentication over one session
/// transcript, with the device key its MSO names. Whoever holds that answer
/// can submit it again, to any tenant, through any flow or entry point; so
/// its single use is decided by this identity across the whole deployment,
/// while the tenant's nonce stays single-use per tenant as before.
///
/// The identity is computed from the transcript's data items, never from the
/// bytes a submitter chose (`CanonicalCBOR`): a re-encoded transcript (a
/// longer array head, reordered map keys, a re-encoded DeviceEngagement) is
/// the same session and gives the same token. Re-encodings are not refused,
/// because ISO 18013-5 has the device authenticate the transcript's bytes as
/// it received them, and wallets and readers in the field send transcripts in
/// encodings other than the preferred one (the auth0 vectors' maps with
/// two-byte lengths): what a signature covers is checked over the exact bytes;
/// what counts as "the same presentation" is decided over the items.
public enum PresentationIdentity {
    /// SHA-256 over a label, the device key (SEC 1 uncompressed point, or the
    /// Ed25519 key's 32 bytes) with its length, and the canonical transcript.
    /// The worker stores only a keyed hash of it (`replay.nonceKeyFile`).
    public static func token(deviceKey: PublicKey, canonicalTranscript: [UInt8]) -> [UInt8] {
        let key = deviceKey.uncompressedPoint ?? deviceKey.ed25519Raw ?? []
        var input = Array("veridoc.presentation.v1".utf8) + [0]
        input += [UInt8(truncatingIfNeeded: key.count >> 8), UInt8(truncatingIfNeeded: key.count)] + key
        input += canonicalTranscript
        return sha256(input)
    }
}
