import Foundation
import JSON
import Testing
import TestIssuer
import Verification

/// The response answers the request that was made (issue 41 §4): a document
/// of a docType nobody asked for is refused, any one of several requested
/// docTypes answers an any-of request, elements nobody asked for are neither
/// kept nor reported, and requested elements that did not come back are
/// listed as withheld.
struct RequestAnswerTests {
    static let mDL = "org.iso.18013.5.1.mDL"
    static let namespace = TestIssuer.Credential.mDLNameSpace

    @Test("a document of a docType that was not requested is refused", arguments: Flow.allCases)
    func unrequestedDocType(_ flow: Flow) throws {
        var factory = try Fixtures.factory(seed: 410)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.requestedDocTypes = ["eu.europa.ec.eudi.pid.1"]
        let result = Fixtures.verify(try factory.event(flow, options: options), with: verifier)
        #expect(result.codes == [.responseDoctypeNotRequested], "\(result.report.reasons.map(\.detail))")
        #expect(!result.isVerified)
    }

    @Test("any one of several requested docTypes answers, and none stated accepts any", arguments: [[mDL], ["org.iso.23220.photoid.1", mDL], []])
    func anyOfRequests(_ docTypes: [String]) throws {
        var factory = try Fixtures.factory(seed: 411)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.requestedDocTypes = docTypes
        let result = Fixtures.verify(try factory.event(.appleWalletApp, options: options), with: verifier)
        #expect(result.isVerified, "\(result.report.reasons.map(\.detail))")
        #expect(result.report.status(of: .responseRequest) == .passed)
    }

    /// The holder discloses its whole mDL; the request named two elements that
    /// exist and one that does not: only the two are kept and reported, the
    /// third is withheld, and nothing else reaches the outcome or its sealed claims.
    @Test func elementsBeyondTheRequestAreDroppedAndMissingOnesWithheld() throws {
        var factory = try Fixtures.factory(seed: 412)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.requestedElements = [
            RequestedElement(namespace: Self.namespace, element: "family_name", retention: .mayStore(days: 30)),
            RequestedElement(namespace: Self.namespace, element: "age_over_21", retention: .willNotStore),
            RequestedElement(namespace: Self.namespace, element: "nationality", retention: .willNotStore),
        ]
        let event = try factory.event(.appleWalletApp, options: options)
        let result = Fixtures.verify(event, with: verifier)
        #expect(result.isVerified, "\(result.report.reasons.map(\.detail))")
        let disclosed = try #require(result.documents.first).elements.map(\.identifier)
        #expect(disclosed.sorted() == ["age_over_21", "family_name"], "only what was asked for is kept: \(disclosed)")
        #expect(result.withheldElements.map(\.element) == ["nationality"])
        let outcome = try JSONParser().parse(Array(OutcomeEvent(result).json().utf8))
        let data = try #require(outcome.objectValue?["data"]?.objectValue)
        let listed = data["elements"]?.arrayValue?.compactMap { $0.objectValue?["element"]?.stringValue } ?? []
        #expect(listed.sorted() == ["age_over_21", "family_name"])
        let withheld = data["withheld"]?.arrayValue?.compactMap { $0.objectValue?["element"]?.stringValue } ?? []
        #expect(withheld == ["nationality"])

        // The same response with no request stated: every disclosed element is listed, none withheld.
        let open = Fixtures.verify(try factory.event(.appleWalletApp), with: verifier)
        #expect(open.isVerified)
        #expect((open.documents.first?.elements.count ?? 0) > 3)
        #expect(open.withheldElements.isEmpty)
    }
}
