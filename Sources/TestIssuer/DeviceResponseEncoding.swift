import CBOR

extension TestIssuer {
    /// `DeviceResponse = {"version": "1.0", ? "documents": [+Document], "status": uint}`.
    /// No documents means the key is left out, as ISO 18013-5 requires (the CDDL is `[+ Document]`).
    public static func deviceResponse(documents: [CBOR], status: UInt64 = 0, version: String = "1.0") -> [UInt8] {
        var entries: [CBOR.MapEntry] = [CBOR.MapEntry("version", .text(version))]
        if !documents.isEmpty { entries.append(CBOR.MapEntry("documents", .array(documents))) }
        entries.append(CBOR.MapEntry("status", .unsigned(status)))
        return CBOR.map(entries).encoded()
    }
}
