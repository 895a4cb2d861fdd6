import Foundation
import JSON
import Kafka
import Verification

/// Reads a Kafka record as a CloudEvent, in structured mode (the JSON event
/// as the value) or binary mode (`ce_*` headers, `data` as the value), and
/// decides whether it can be attributed to an event id at all. Records that
/// cannot go to the dead-letter topic; everything else gets an outcome, a
/// rejected one if the event is invalid.
package struct RecordIntake: Sendable {
    let parser: EventParser

    package init(parser: EventParser) { self.parser = parser }
    /// Longest event id accepted: ids are primary keys and outcome subjects.
    let maxIDLength = 256

    enum Cause {
        static let tooLarge = "record.too_large"
        static let notUTF8 = "record.not_utf8"
        static let noID = "record.no_id"
    }

    func read(_ record: KafkaMessage) -> Job.Content {
        let deadLetter = { (cause: String) in Job.Content.deadLetter(DeadLetter(cause: cause, record: record)) }
        guard record.value.count <= parser.maxEventBytes else { return deadLetter(Cause.tooLarge) }
        let specVersionHeader = header("ce_specversion", in: record)
        // A structured event in the common form, read in one pass. Every byte
        // of a record it reads was checked on the way (ASCII structure, text
        // checked as UTF-8, base64), so the UTF-8 check below would pass.
        if specVersionHeader == nil, let request = parser.commonForm(record.value), isUsable(id: request.id) {
            return .event(.request(request))
        }
        guard isValidUTF8(record.value) else { return deadLetter(Cause.notUTF8) }

        let attributes: JSONObject
        let data: JSONValue?
        if let specVersion = specVersionHeader {
            var binary: JSONObject = ["specversion": .string(specVersion)]
            for header in record.headers where header.key.hasPrefix("ce_") {
                if let value = header.value.flatMap({ String(validating: $0, as: UTF8.self) }) {
                    binary[String(header.key.dropFirst(3))] = .string(value)
                }
            }
            if let contentType = header("content-type", in: record) {
                binary["datacontenttype"] = contentType.split(separator: ";").first.map { .string($0.trimmingCharacters(in: .whitespaces)) }
            }
            attributes = binary
            data = try? JSONParser(maxMembers: EventParser.maxObjectMembers).parse(record.value)
            if binary.count > EventParser.maxObjectMembers, let id = binary["id"]?.stringValue, isUsable(id: id) {
                return .event(.invalid(EventRejection(
                    id: id, tenant: nil, flow: nil, detail: "more than \(EventParser.maxObjectMembers) CloudEvents attributes")))
            }
        } else {
            // The same bound on members as the event parser's: what it refuses, the worker refuses.
            guard let object = (try? JSONParser(maxMembers: EventParser.maxObjectMembers).parse(record.value))?.objectValue else {
                return deadLetter(Cause.noID)
            }
            attributes = object
            data = object["data"]
        }
        guard let id = attributes["id"]?.stringValue, isUsable(id: id) else {
            return deadLetter(Cause.noID)
        }
        switch parser.parse(attributes: attributes, data: data) {
        case .success(let request): return .event(.request(request))
        case .failure(let rejection): return .event(.invalid(rejection))
        }
    }

    /// Whether `id` can key the event's rows and be its outcome's subject. A
    /// U+0000, which PostgreSQL text cannot store, would fail every batch the
    /// event is in.
    private func isUsable(id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxIDLength && !id.utf8.contains(0)
    }

    private func header(_ name: String, in record: KafkaMessage) -> String? {
        record.headers.last { $0.key == name }?.value.flatMap { String(validating: $0, as: UTF8.self) }
    }
}
