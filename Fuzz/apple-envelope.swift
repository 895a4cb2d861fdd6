// libFuzzer target: the APPLE-HPKE-v1 envelope parser, and the decrypted
// plaintext path (`{"identity": DeviceResponse}`) on the same bytes.
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
    defer { HeapBudget.check(since: heap, "apple-envelope") }
    let bytes = count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count))
    _ = try? AppleEnvelope(bytes: bytes[...])
    if let identity = try? AppleEnvelope.identity(inPlaintext: bytes), let response = try? DeviceResponse(identity) {
        for document in response.documents {
            if let payload = document.issuerSigned.issuerAuth.payload { _ = try? MobileSecurityObject(payload: payload) }
            _ = try? document.issuerSigned.issuerAuth.algorithm(context: "fuzz")
            _ = try? document.issuerSigned.issuerAuth.x5chain(context: "fuzz")
        }
    }
    return 0
}
