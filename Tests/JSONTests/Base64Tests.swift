import Foundation
import Testing
@testable import JSON

@Suite struct Base64Tests {
    @Test func rfc4648VectorsDecode() {
        let vectors = ["": "", "Zg==": "f", "Zm8=": "fo", "Zm9v": "foo", "Zm9vYg==": "foob", "Zm9vYmE=": "fooba", "Zm9vYmFy": "foobar"]
        for (encoded, plain) in vectors {
            #expect(Base64.decodeStandard(encoded) == Array(plain.utf8), "\(encoded)")
            #expect(Base64.decodeURL(encoded.replacingOccurrences(of: "=", with: "")) == Array(plain.utf8))
            #expect(Base64.encodeURL(Array(plain.utf8)) == encoded.replacingOccurrences(of: "=", with: ""))
        }
    }

    @Test func agreesWithFoundationOnRandomBytes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.decodeStandard(standard) == bytes)
            #expect(Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURL(bytes) == url, "length \(length): RFC 4648 §5, unpadded")
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
        #expect(Base64.decodeStandard("Zm9=") == nil, "non-zero unused bits after two bytes")
        #expect(Base64.decodeURL("Zm9") == nil, "non-zero unused bits, unpadded")
        #expect(Base64.decodeStandard("Zm=v") == nil, "padding inside")
    }

    @Test func aBadCharacterAnywhereRejectsTheWhole() {
        let good = Data((0..<47).map { UInt8($0 * 5) }).base64EncodedString()
        #expect(Base64.decodeStandard(good) != nil)
        for position in good.indices where good[position] != "=" {
            for bad in ["-", "*", "\u{0}", "é"] {
                var text = good
                text.replaceSubrange(position...position, with: bad)
                #expect(Base64.decodeStandard(text) == nil, "\(bad) at \(good.distance(from: good.startIndex, to: position))")
            }
        }
    }
}
