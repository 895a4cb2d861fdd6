// libFuzzer target: ISO 18013-7 Annex C EncryptedResponse and EncryptionInfo,
// and the bare DeviceResponse (the Annex C plaintext) down to each document's MSO.
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
    defer { HeapBudget.check(since: heap, "annex-c") }
    let bytes = count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count))
    _ = try? AnnexCEncryptedResponse(bytes: bytes[...])
    _ = try? AnnexCEncryptionInfo(bytes: bytes[...])
    _ = try? SessionTranscript(received: bytes)
    if let response = try? DeviceResponse(bytes: bytes[...]) {
        for document in response.documents {
            let auth = document.issuerSigned.issuerAuth
            if let payload = auth.payload { _ = try? MobileSecurityObject(payload: payload) }
            _ = try? auth.algorithm(context: "fuzz")
            _ = try? auth.x5chain(context: "fuzz")
            _ = auth.toBeSigned()
        }
    }
    return 0
}
