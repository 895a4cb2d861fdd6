import Foundation
import JSON

/// A JSON value as the object JSONSerialization takes and gives, so that
/// tests can hold the JSON module to what Foundation reads and writes.
public func foundationObject(_ value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let flag): return flag
    case .number(let number): return number.integer.map { NSNumber(value: $0) } ?? NSNumber(value: number.double)
    case .string(let text): return text
    case .array(let elements): return elements.map(foundationObject)
    case .object(let object):
        var dictionary: [String: Any] = [:]
        for member in object.members { dictionary[member.key] = foundationObject(member.value) }
        return dictionary
    }
}
