import MDoc

/// `response.request`: the response answers the request that was made. When
/// the event (or the session behind it) names the docTypes it asked for, a
/// document of any other docType is refused: a holder, or whoever forwards
/// the response, must not answer a request for one credential with another
/// (an mDL for an EU PID, say). Any one of several requested docTypes
/// answers an any-of request. With no docType stated, any docType may answer.
///
/// What the response discloses beyond the requested elements is not kept
/// (`RequestUnderVerification.verifyDocuments`), and the requested elements
/// it did not return are listed as withheld in the outcome.
enum ResponseRequestCheck: RequestCheck {
    static let name = CheckName.responseRequest
    static let reasons: [ReasonCode] = [.responseDoctypeNotRequested]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let response = request.response else { return }
        let requested = request.request.requestedDocTypes
        guard !requested.isEmpty else {
            report.pass(name)
            return
        }
        let unrequested = response.documents.enumerated().filter { _, document in
            !requested.contains { $0.hasSameUTF8(as: document.docType) }
        }
        if unrequested.isEmpty {
            report.pass(name)
        } else {
            // docTypes are issuer vocabulary, not personal data; the list is bounded by the response's documents.
            let named = unrequested.prefix(3).map { "document \($0.offset) (\($0.element.docType))" }.joined(separator: ", ")
            report.fail(name, .responseDoctypeNotRequested,
                        "\(named)\(unrequested.count > 3 ? " and \(unrequested.count - 3) more" : "") answer a request for \(requested.count == 1 ? "" : "one of ")\(requested.prefix(4).joined(separator: ", "))")
        }
    }
}
