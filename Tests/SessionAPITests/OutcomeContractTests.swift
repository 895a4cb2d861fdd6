import Foundation
import JSON
import Testing
import TestSupport

/// The session API's contract types a session's `outcome` with the outcome
/// event's own schema: `Outcome` is the event schema's `properties.data`
/// and each `Outcome.X` its `$defs.X`, references rewritten, so the two
/// documents cannot say different things of one outcome.
@Suite struct OutcomeContractTests {
    static func read(_ path: String) throws -> JSONValue {
        try JSONParser().parse(Array(try Data(contentsOf: Binaries.repository.appendingPathComponent(path))))
    }

    /// `#/$defs/X` → `#/components/schemas/Outcome.X`, everywhere in `value`.
    static func rewritingReferences(_ value: JSONValue) -> JSONValue {
        if let object = value.objectValue {
            var rewritten = JSONObject()
            for member in object.members {
                if member.key == "$ref", let target = member.value.stringValue, target.hasPrefix("#/$defs/") {
                    _ = rewritten.append(member.key, .string("#/components/schemas/Outcome." + target.dropFirst("#/$defs/".count)))
                } else {
                    _ = rewritten.append(member.key, rewritingReferences(member.value))
                }
            }
            return .object(rewritten)
        }
        if let array = value.arrayValue { return .array(array.map(rewritingReferences)) }
        return value
    }

    @Test func theSessionOutcomeIsTheOutcomeEventsData() throws {
        let event = try Self.read("Schemas/verification-completed.v1.schema.json")
        let contract = try Self.read("Schemas/session-api.openapi.json")
        let schemas = try #require(contract["components"]?["schemas"]?.objectValue)
        #expect(schemas["Outcome"] == Self.rewritingReferences(try #require(event["properties"]?["data"])))
        let definitions = try #require(event["$defs"]?.objectValue)
        for definition in definitions.members {
            #expect(schemas["Outcome." + definition.key] == Self.rewritingReferences(definition.value), "Outcome.\(definition.key)")
        }
        let copied = schemas.keys.filter { $0.hasPrefix("Outcome.") }
        #expect(Set(copied) == Set(definitions.keys.map { "Outcome." + $0 }), "no stale Outcome.* schema")
        let session = try #require(schemas["SessionState"]?["properties"]?["outcome"]?["$ref"])
        #expect(session == "#/components/schemas/Outcome")
    }
}
