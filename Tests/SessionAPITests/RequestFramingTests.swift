import Foundation
import Testing
@testable import SessionAPI

/// The small readers on every request's path, held to what they replace.
@Suite struct RequestFramingTests {
    @Test func theMediaTypeIsJSONInAnyCaseWithParameters() {
        for accepted in ["application/json", "Application/JSON", " application/json ", "application/json; charset=utf-8", "application/json;"] {
            #expect(SessionAPI.isJSON(accepted), "\(accepted)")
        }
        for refused in ["", "text/plain", "application/jsonx", "application/json5", "application\u{0F}json", "application/ json", "xapplication/json",
                        "application/problem+json"] {
            #expect(!SessionAPI.isJSON(refused), "\(refused)")
        }
    }

    @Test func sessionIDsAreRandomVersionFourUUIDs() {
        var seen = Set<UUID>()
        for _ in 0..<1_000 {
            let id = randomSessionID()
            let text = id.uuidString.lowercased()
            #expect(Array(text)[14] == "4", "version 4: \(text)")
            #expect("89ab".contains(Array(text)[19]), "RFC 4122 variant: \(text)")
            seen.insert(id)
        }
        #expect(seen.count == 1_000)
    }

    @Test func timesAreWholeSecondsInUTC() {
        #expect(APITime.string(Date(timeIntervalSince1970: 1_800_000_000.75)) == "2027-01-15T08:00:00Z")
    }
}
