/// `response.query` (openid4vp-dc-api): the response fulfils the DCQL query
/// the request made, no more and no less. A DCQL query without claim sets
/// makes every claim it names required, so a wallet that leaves one out has
/// not answered it, and one that adds an element disclosed what nobody
/// asked for (OpenID4VP 1.0 §6.4.1, §8.1). Veridoc's queries name the
/// event's `requestedElements`, and for each `ageAtLeast` one `age_over_NN`,
/// which a wallet may answer with a nearer `age_over_NN` (ISO 18013-5
/// §7.2.5), so any of those counts as asked when ages are. An element the
/// device signed never fulfils a claim (the issuer did not vouch for it)
/// but is still an element disclosed.
///
/// Other flows keep their rule: what was not returned is listed as
/// withheld. With no element stated, the query is not known and the check
/// does not apply.
enum ResponseQueryCheck: RequestCheck {
    static let name = CheckName.responseQuery
    static let reasons: [ReasonCode] = [.responseElementNotRequested, .responseElementMissing]
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard case .openID4VPDCAPI = request.request.input, request.response != nil else { return }
        let asked = request.request.requestedElements
        let asksAges = !request.request.ageRequests.isEmpty
        guard !asked.isEmpty || asksAges, !request.returnedElements.isEmpty else { return }
        let index = RequestedElementIndex(asked)
        // An age of 100 or more is asked as age_in_years (`AgeRequest.requestedElement`).
        let asksAgeInYears = request.request.ageRequests.contains { $0.age >= 100 }
        var unrequested: [String] = []
        var unrequestedCount = 0
        // Linear in elements asked and returned: each side is looked up in the other's index, never scanned.
        var missingIndexes = Set<Int>()
        for (issuerSigned, deviceSigned) in request.returnedElements {
            for element in issuerSigned + deviceSigned where index[namespace: element.namespace, element: element.identifier] == nil {
                if asksAges && AgeAnswer.overAge(element.identifier) != nil { continue }
                if asksAgeInYears && element.identifier.hasSameUTF8(as: "age_in_years") { continue }
                unrequestedCount += 1
                if unrequested.count < 3 { unrequested.append(displayName(element.identifier)) }
            }
            let returned = RequestedElementIndex(issuerSigned.map { RequestedElement(namespace: $0.namespace, element: $0.identifier, retention: .willNotStore) })
            for (position, wanted) in asked.enumerated() where returned[namespace: wanted.namespace, element: wanted.element] == nil {
                missingIndexes.insert(position)
            }
        }
        let missing = missingIndexes.sorted().map { asked[$0].element }
        if unrequestedCount > 0 {
            report.fail(name, .responseElementNotRequested,
                        "the response discloses \(unrequestedCount) element\(unrequestedCount == 1 ? "" : "s") the query did not ask for (\(unrequested.joined(separator: ", "))\(unrequestedCount > 3 ? ", …" : ""))")
        }
        if !missing.isEmpty {
            report.fail(name, .responseElementMissing,
                        "the response lacks \(missing.count) required element\(missing.count == 1 ? "" : "s") the query asked for, issuer-signed (\(missing.prefix(3).map(displayName).joined(separator: ", "))\(missing.count > 3 ? ", …" : ""))")
        }
        if unrequestedCount == 0 && missing.isEmpty { report.pass(name) }
    }

    /// An element identifier as a detail may name it: an identifier of the
    /// usual vocabulary, else a placeholder (the wallet chose these bytes).
    static func displayName(_ identifier: String) -> String {
        let plain = identifier.utf8.count <= 64 && identifier.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
        return plain && !identifier.isEmpty ? identifier : "an element of another form"
    }
}
