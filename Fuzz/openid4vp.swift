// libFuzzer target: what an OpenID4VP answer over the Digital Credentials API
// brings. The first input byte chooses what the rest is:
//   0 — the event's `data.response` object (JSON), put into a valid
//       openid4vp-dc-api event and verified whole against the fixed tenant;
//   1 — a compact JWE, read (CompactJWE) and decrypted with the merchant's key,
//       and its plaintext read as a decrypted response (`{"vp_token": ...}`).
import Foundation
import JOSE
import JSON
import Verification

enum Target: FuzzTarget {
    static let name: StaticString = "openid4vp"

    static func prepare() {
        _ = Fixture.shared
    }

    static func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let fixture = Fixture.shared
        let rest = Array(input.dropFirst())
        if mode % 2 == 0 {
            guard let event = fixture.events[.openID4VPDCAPI], var object = try? JSONParser().parse(event.json()).objectValue,
                  var data = object["data"]?.objectValue else { return }
            // The fuzzed bytes stand where the response object stands: spliced as text, so that malformed JSON is fuzzed too.
            data["response"] = "\u{0}"
            object["data"] = .object(data)
            let template = JSONValue.object(object).jsonBytes()
            let placeholder = Array(#""\u0000""#.utf8)
            guard let at = template.indices.first(where: { template[$0...].starts(with: placeholder) }) else { return }
            let json = Array(template[..<at]) + rest + Array(template[(at + placeholder.count)...])
            _ = OutcomeEvent(fixture.verifier.verify(eventJSON: json, at: fixture.now)).json()
        } else {
            guard let jwe = try? CompactJWE(compact: String(decoding: rest, as: UTF8.self)),
                  let plaintext = try? jwe.decrypt(with: fixture.merchant.currentKey) else { return }
            _ = VPToken.deviceResponse(decrypted: plaintext, credentialQueryID: nil)
        }
    }
}
