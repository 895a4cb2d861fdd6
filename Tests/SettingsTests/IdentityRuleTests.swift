import Foundation
import JSON
import Settings
import Testing

/// `IdentityRule`: ids are matched by their bytes, and the config refuses two
/// ids a person could not tell apart (Unicode-equivalent, other bytes).
@Suite struct IdentityRuleTests {
    static func refusal(_ json: String) -> String? { SettingsTests.refusal(json) }

    static let nfc = "Caf\u{00E9}"
    static let nfd = "Cafe\u{0301}"

    @Test func theRuleIsBytes() {
        #expect(IdentityRule.same(Self.nfc, Self.nfc))
        #expect(!IdentityRule.same(Self.nfc, Self.nfd))
        #expect(IdentityRule.confusable(Self.nfc, Self.nfd))
        #expect(IdentityRule.confusable("K", "\u{212A}"), "the Kelvin sign")
        #expect(!IdentityRule.confusable("acme", "Acme"), "case tells ids apart, to a person too")
        #expect(!IdentityRule.confusable("acme", "acme"), "the same id is not two ids")
    }

    @Test func twoTenantsTheRuleWouldConfuseAreRefused() throws {
        let message = try #require(Self.refusal(#"{"tenants": [{"id": "\#(Self.nfc)", "trustAnchors": ["a"]}, {"id": "acme", "trustAnchors": ["a"]}, {"id": "\#(Self.nfd)", "trustAnchors": ["a"]}]}"#))
        #expect(message.hasPrefix("tenants[2].id: looks the same as tenants[0].id"), "\(message)")
        #expect(Self.refusal(#"{"tenants": [{"id": "K", "trustAnchors": ["a"]}, {"id": "\u212A", "trustAnchors": ["a"]}]}"#)?.hasPrefix("tenants[1].id:") == true)
        #expect(Self.refusal(#"{"tenants": [{"id": "acme", "trustAnchors": ["a"]}, {"id": "acme", "trustAnchors": ["b"]}]}"#)?
            .hasPrefix("tenants[1].id: duplicate tenant id") == true)
        #expect(Self.refusal(#"{"tenants": [{"id": "acme", "trustAnchors": ["a"]}, {"id": "Acme", "trustAnchors": ["b"]}]}"#) == nil)
    }

    @Test func aConfusableMerchantIdIsRefusedWithinATenantAndAcrossTenants() throws {
        let across = #"{"tenants": [{"id": "a", "teamId": "T", "merchantIds": ["m1", "\#(Self.nfc)"], "trustAnchors": ["a"]}, "#
            + #"{"id": "b", "teamId": "T", "merchantIds": ["\#(Self.nfd)"], "trustAnchors": ["a"]}]}"#
        #expect(Self.refusal(across)?.hasPrefix("tenants[1].merchantIds[0]: looks the same as tenants[0].merchantIds[1]") == true, "\(Self.refusal(across) ?? "accepted")")
        let within = #"{"tenants": [{"id": "a", "teamId": "T", "merchantIds": ["\#(Self.nfd)", "\#(Self.nfc)"], "trustAnchors": ["a"]}]}"#
        #expect(Self.refusal(within)?.hasPrefix("tenants[0].merchantIds[1]: looks the same as tenants[0].merchantIds[0]") == true)
        // The same merchant id (same bytes) in two tenants is one id, not two that look alike.
        let shared = #"{"tenants": [{"id": "a", "teamId": "T", "merchantIds": ["\#(Self.nfc)"], "trustAnchors": ["a"]}, "#
            + #"{"id": "b", "teamId": "T", "merchantIds": ["\#(Self.nfc)"], "trustAnchors": ["a"]}]}"#
        #expect(Self.refusal(shared) == nil)
    }
}
