import Foundation

/// Strict base64 for event fields: one alphabet per field, no whitespace, no
/// mixing of the standard and URL-safe alphabets. Ambiguity here would let two
/// different strings name the same payload.
enum Base64 {
    /// RFC 4648 §4, padding required.
    static func decodeStandard(_ text: String) -> [UInt8]? {
        guard !text.contains(where: { $0 == "-" || $0 == "_" }) else { return nil }
        return Data(base64Encoded: text).map(Array.init)
    }

    /// RFC 4648 §5, padding optional (the Digital Credentials API omits it).
    static func decodeURL(_ text: String) -> [UInt8]? {
        guard !text.contains(where: { $0 == "+" || $0 == "/" }) else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        switch standard.count % 4 {
        case 0: break
        case 2: standard += "=="
        case 3: standard += "="
        default: return nil
        }
        if text.hasSuffix("=") && text.count % 4 != 0 { return nil }
        return Data(base64Encoded: standard).map(Array.init)
    }

    static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        String(Data(bytes).base64EncodedString().compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }
}
