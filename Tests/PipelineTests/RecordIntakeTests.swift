import Foundation
import Kafka
@testable import Pipeline
import Testing
import Verification

/// How a record is read, without Kafka: the one-pass read of the common event
/// form comes first and skips the record's UTF-8 check, so a record that is
/// not UTF-8 must never get through it.
@Suite struct RecordIntakeTests {
    static let intake = RecordIntake(parser: EventParser())
    static let valid = #"{"specversion":"1.0","id":"e1","source":"/s","type":"veridoc.verification.requested.v1","time":"2025-06-15T14:13:20Z","datacontenttype":"application/json","data":{"tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":"AAEC","merchantId":"m"}}"#

    static func read(_ value: [UInt8], headers: [KafkaHeader] = []) -> String {
        let record = KafkaMessage(topicPartition: TopicPartition("t", 0), offset: 0, key: nil, value: value, headers: headers)
        switch intake.read(record) {
        case .event(.request(let request)): return "request \(request.id)"
        case .event(.invalid(let rejection)): return "invalid \(rejection.detail)"
        case .deadLetter(let letter): return "dead \(letter.cause)"
        case .unread: return "unread"
        }
    }

    static func replacing(_ text: String, _ byte: UInt8) -> [UInt8] {
        var bytes = Array(valid.utf8)
        bytes.replaceSubrange(bytes.firstRange(of: Array(text.utf8))!, with: [byte])
        return bytes
    }

    @Test func recordsThatAreNotUTF8AreDeadLetteredWhereverTheBadByteIs() {
        #expect(Self.read(Array(Self.valid.utf8)) == "request e1")
        // In the id, a plain attribute, a base64 payload, a key, between tokens.
        for (place, byte) in [("e1", UInt8(0xFF)), ("/s", 0xC0), ("AAEC", 0x80), ("merchantId", 0xFE), (",\"data\"", 0xED)] {
            #expect(Self.read(Self.replacing(place, byte)) == "dead record.not_utf8", "\(place)")
        }
        var extended = Array(Self.valid.utf8.dropLast())
        extended += Array(#","ext":{"x":"#.utf8) + [0x22, 0xC3, 0x28, 0x22] + Array("}}".utf8)
        #expect(Self.read(extended) == "dead record.not_utf8")
    }

    @Test func theOnePassReadAnswersAsBefore() {
        let longID = Self.valid.replacingOccurrences(of: #""e1""#, with: "\"\(String(repeating: "i", count: 257))\"")
        #expect(Self.read(Array(longID.utf8)) == "dead record.no_id")
        let noID = Self.valid.replacingOccurrences(of: #""id":"e1","#, with: "")
        #expect(Self.read(Array(noID.utf8)) == "dead record.no_id")
        let wrongType = Self.valid.replacingOccurrences(of: "requested.v1", with: "requested.v9")
        #expect(Self.read(Array(wrongType.utf8)) == "invalid type is not veridoc.verification.requested.v1")
        // Binary mode is read by the general reader (its attributes are headers).
        let binary = Self.read(Array(#"{"tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":"AAEC","merchantId":"m"}"#.utf8),
                               headers: [KafkaHeader("ce_specversion", Array("1.0".utf8)), KafkaHeader("ce_id", Array("b1".utf8)),
                                         KafkaHeader("ce_source", Array("/s".utf8)), KafkaHeader("ce_type", Array(VerificationRequest.eventType.utf8)),
                                         KafkaHeader("ce_time", Array("2025-06-15T14:13:20Z".utf8)),
                                         KafkaHeader("content-type", Array("application/json; charset=utf-8".utf8))])
        #expect(binary == "request b1")
    }
}
