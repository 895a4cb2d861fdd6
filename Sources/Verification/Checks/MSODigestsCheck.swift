import MDoc

/// `mso.digests`: each disclosed item's digest, over its received tag-24
/// bytes, is the one the issuer signed under its namespace and digestID
/// (namespaces by their bytes). A digest vouches for one item: a digestID or
/// an element identifier twice in one namespace is refused, or one signed
/// item would be disclosed twice, or one element with two values.
enum MSODigestsCheck: DocumentCheck {
    static let name = CheckName.msoDigests
    static let reasons: [ReasonCode] = [.msoDigestMismatch]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let mso = document.parsedMSO else { return }
        var mismatches = FindingSummary()
        var repeated = FindingSummary()
        for space in document.document.issuerSigned.nameSpaces {
            let signed = mso.valueDigests[Identifier(space.name)]
            var digestIDs = Set<UInt64>()
            var identifiers = Set<Identifier>()
            digestIDs.reserveCapacity(space.items.count)
            identifiers.reserveCapacity(space.items.count)
            // Items are read in place (copying each would retain its four references).
            space.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    let item = items[index]
                    if !digestIDs.insert(item.digestID).inserted {
                        repeated.add("digestID \(item.digestID) in \(space.name)")
                    }
                    if !identifiers.insert(Identifier(item.elementIdentifier)).inserted {
                        repeated.add("\(space.name)/\(item.elementIdentifier)")
                    }
                    guard let expected = signed?[item.digestID] else {
                        mismatches.add("\(space.name)/\(item.elementIdentifier) (no signed digest)")
                        continue
                    }
                    let actual = mso.digestAlgorithm.hash(item.taggedBytes)
                    if !constantTimeEqual(actual, expected) {
                        mismatches.add("\(space.name)/\(item.elementIdentifier)")
                    }
                }
            }
        }
        if mismatches.isEmpty && repeated.isEmpty {
            report.pass(name)
            return
        }
        let label = document.label
        if !mismatches.isEmpty {
            report.fail(name, .msoDigestMismatch, "\(label): digest mismatch for \(mismatches.count) item(s): \(mismatches.description)")
        }
        if !repeated.isEmpty {
            report.fail(name, .msoDigestMismatch, "\(label): disclosed twice in one namespace: \(repeated.description)")
        }
    }

    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: ArraySlice<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
