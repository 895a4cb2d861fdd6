import CBOR
import MDoc

extension MSOStatus {
    /// The `status` member as an issuer writes it, for `IssuanceOptions.status`.
    public var encoded: CBOR {
        var entries: [CBOR.MapEntry] = []
        if let list = statusList {
            var info: [CBOR.MapEntry] = [CBOR.MapEntry("idx", .unsigned(list.index)), CBOR.MapEntry("uri", .text(list.uri))]
            if let certificate = list.certificate { info.append(CBOR.MapEntry("certificate", .bytes(certificate))) }
            entries.append(CBOR.MapEntry("status_list", .map(info)))
        }
        if let list = identifierList {
            var info: [CBOR.MapEntry] = [CBOR.MapEntry("id", .bytes(list.id)), CBOR.MapEntry("uri", .text(list.uri))]
            if let certificate = list.certificate { info.append(CBOR.MapEntry("certificate", .bytes(certificate))) }
            entries.append(CBOR.MapEntry("identifier_list", .map(info)))
        }
        return .map(entries)
    }
}
