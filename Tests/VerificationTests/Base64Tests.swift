import Foundation
import Testing
@testable import Verification

@Suite struct Base64Tests {
    @Test func rfc4648VectorsDecode() {
        let vectors = ["": "", "Zg==": "f", "Zm8=": "fo", "Zm9v": "foo", "Zm9vYg==": "foob", "Zm9vYmE=": "fooba", "Zm9vYmFy": "foobar"]
        for (encoded, plain) in vectors {
            #expect(Base64.decodeStandard(encoded) == Array(plain.utf8), "\(encoded)")
            #expect(Base64.decodeURL(encoded.replacingOccurrences(of: "=", with: "")) == Array(plain.utf8))
        }
    }

    @Test func agreesWithFoundationOnRandomBytes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.decodeStandard(standard) == bytes)
            #expect(Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
        }
    }

    @Test func strictnessRejectsWhatIsAmbiguous() {
        #expect(Base64.decodeStandard("Zm9v\n") == nil, "whitespace")
        #expect(Base64.decodeStandard("Zg") == nil, "standard needs padding")
        #expect(Base64.decodeStandard("_-8=") == nil, "URL alphabet in a standard field")
        #expect(Base64.decodeURL("+/8") == nil, "standard alphabet in a URL field")
        #expect(Base64.decodeStandard("Zh==") == nil, "non-zero unused bits")
        #expect(Base64.decodeStandard("Z===") == nil)
        #expect(Base64.decodeStandard("Zm9v YmFy") == nil)
        #expect(Base64.decodeStandard("Zm9vé") == nil, "non-ASCII")
    }
}
