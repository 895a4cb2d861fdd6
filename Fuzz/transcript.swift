// libFuzzer target: a received SessionTranscript, as iso-device-response
// takes it: its form (TranscriptForm) and its canonical encoding
// (CanonicalCBOR), from which the presentation's single-use identity is made.
// Whatever the bytes: no crash, and the canonical encoding is a fixed point
// (encoding it again gives the same bytes) with the same form, so that two
// encodings of one transcript can never give two identities.
import CBOR
import MDoc

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    HeapBudget.install()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let heap = HeapBudget.start()
    defer { HeapBudget.check(since: heap, "transcript") }
    let bytes = count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count))
    let limits = CBORDecoder.Limits(maxItems: 25_000).budgeted()
    guard let transcript = try? SessionTranscript(received: bytes, limits: limits) else { return 0 }
    let form = try? TranscriptForm.of(transcript, limits: limits)
    guard let canonical = try? CanonicalCBOR.encoding(of: transcript.encoded, limits: limits) else { return 0 }
    let fresh = CBORDecoder.Limits(maxItems: 25_000).budgeted()
    guard let again = try? CanonicalCBOR.encoding(of: canonical, limits: fresh) else {
        preconditionFailure("the canonical encoding of a transcript does not decode")
    }
    precondition(again == canonical, "the canonical encoding is not a fixed point")
    if let form, let canonicalTranscript = try? SessionTranscript(received: canonical, limits: fresh) {
        let reread = try? TranscriptForm.of(canonicalTranscript, limits: fresh)
        precondition(reread?.name == form.name, "re-encoding changed the transcript's form")
    }
    return 0
}
