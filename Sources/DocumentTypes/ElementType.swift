import CBOR

/// The CBOR type a catalogued element must have (ISO/IEC 18013-5 §7.2.1
/// and the types the other catalogued documents borrow from it).
///
/// `full-date` is `#6.1004(tstr)` and `tdate` is `#6.0(tstr)` (RFC 8943,
/// RFC 8949 §3.4.1); `date` admits either, for elements whose definitions
/// say "tdate or full-date". The structured types are the few whose shape
/// the standards define beyond one CBOR major type.
public enum ElementType: String, Sendable, CaseIterable {
    case text = "tstr"
    case unsigned = "uint"
    case integer = "int"
    case boolean = "bool"
    case bytes = "bstr"
    case fullDate = "full-date"
    case dateTime = "tdate"
    case date = "date"
    case textArray = "tstr-array"
    /// A text, or a non-empty array of texts: the EU PID's `nationality`, an array today, one text in its legacy rulebook.
    case textOrTextArray = "tstr-or-tstr-array"
    case array = "array"
    case map = "map"
    /// ISO 18013-5 `driving_privileges` (and AAMVA's domestic form): an array
    /// of maps, each with at least a text `vehicle_category_code`.
    case drivingPrivileges = "driving-privileges"
    /// ISO/IEC 23220-2 `birth_date`: a map `{birth_date: full-date, ?
    /// approximate_mask: tstr}`, or a plain full-date as some issuers write it.
    case birthDate = "birth-date"
    /// EU PID `place_of_birth`: a map of text `country`, `region`, `locality`, at least one present.
    case placeOfBirth = "place-of-birth"

    /// Whether `item` has this type. Only the shape is checked: a date's
    /// text is not parsed here, nor a map's members beyond what the type names.
    public func admits(_ item: CBORItem) -> Bool {
        switch self {
        case .text: item.text != nil
        case .unsigned: item.unsigned != nil
        case .integer: item.int != nil
        case .boolean: item.bool != nil
        case .bytes: item.bytes != nil
        case .fullDate: Self.isTagged(item, 1004)
        case .dateTime: Self.isTagged(item, 0)
        case .date: Self.isTagged(item, 1004) || Self.isTagged(item, 0)
        case .textArray: item.array.map { !$0.isEmpty && $0.allSatisfy { $0.text != nil } } ?? false
        case .textOrTextArray: item.text != nil || ElementType.textArray.admits(item)
        case .array: item.array != nil
        case .map: item.entries != nil
        case .drivingPrivileges:
            item.array?.allSatisfy { privilege in privilege["vehicle_category_code"]?.text != nil } ?? false
        case .birthDate:
            Self.isTagged(item, 1004) || (item["birth_date"].map { Self.isTagged($0, 1004) } ?? false)
        case .placeOfBirth:
            Self.placeOfBirthAdmits(item)
        }
    }

    private static func isTagged(_ item: CBORItem, _ tag: UInt64) -> Bool {
        guard let tagged = item.tagged else { return false }
        return tagged.tag == tag && tagged.item.text != nil
    }

    private static func placeOfBirthAdmits(_ item: CBORItem) -> Bool {
        guard let entries = item.entries, !entries.isEmpty else { return false }
        return entries.allSatisfy { entry in
            // Byte comparison, as every key of a received map.
            guard let key = entry.key.text, ["country", "region", "locality"].contains(where: { $0.utf8.elementsEqual(key.utf8) }) else { return false }
            return entry.value.text != nil
        }
    }
}

/// What an element tells about its holder.
public enum ElementKind: String, Sendable, CaseIterable {
    /// Personal data: names, dates, numbers, images, addresses.
    case personal
    /// An answer about the holder that is not itself the data: `age_over_NN`, `age_in_years`.
    case predicate
    /// About the document rather than the person: issuer, dates of issue, versions.
    case technical
}
