// libFuzzer target: a received SessionTranscript, as iso-device-response
// takes it: its form (TranscriptForm) and its canonical encoding
// (CanonicalCBOR), from which the presentation's single-use identity is made.
// Whatever the bytes: no crash, and the canonical encoding is a fixed point
// (encoding it again gives the same bytes) with the same form, so that two
// encodings of one transcript can never give two identities.
import CBOR
import MDoc

enum Target: FuzzTarget {
    static let name: StaticString = "transcript"

    static func run(_ bytes: [UInt8]) {
        let limits = CBORDecoder.Limits(maxItems: 25_000).budgeted()
        guard let transcript = try? SessionTranscript(received: bytes, limits: limits) else { return }
        let form = try? TranscriptForm.of(transcript, limits: limits)
        guard let canonical = try? CanonicalCBOR.encoding(of: transcript.encoded, limits: limits) else { return }
        let fresh = CBORDecoder.Limits(maxItems: 25_000).budgeted()
        guard let again = try? CanonicalCBOR.encoding(of: canonical, limits: fresh) else {
            preconditionFailure("the canonical encoding of a transcript does not decode")
        }
        precondition(again == canonical, "the canonical encoding is not a fixed point")
        if let form, let canonicalTranscript = try? SessionTranscript(received: canonical, limits: fresh) {
            let reread = try? TranscriptForm.of(canonicalTranscript, limits: fresh)
            precondition(reread?.name == form.name, "re-encoding changed the transcript's form")
        }
    }
}
