// Structure-aware mutation shared by the targets (each exports
// `LLVMFuzzerCustomMutator` and calls `StructureMutator.mutate`).
//
// Byte mutations rarely turn one document into hundreds, or one map key into
// tens of thousands: they would have to write a valid CBOR head and content
// for each. The cases issue 22 §1 lists are exactly such multiplications, so
// now and then the input is decoded and one dimension is multiplied:
//   CBOR (DeviceResponse, MSO, IssuerSignedItem, envelopes): an array element
//     repeated N times (documents, tag-24 items, certificates), N unknown text
//     keys added to a map, a map entry repeated under N new keys (namespaces,
//     valueDigests), or a string grown to many bytes (big elementValues);
//     byte strings that hold CBOR (tag 24, COSE payloads) are entered and
//     re-encoded, so the MSO inside issuerAuth and each item are reached.
//   JSON events: N extension attributes, N requestedElements, N unknown data
//     fields, or the iso-device-response payload mutated as CBOR.
// N fills a random share of what `max_size` leaves, so the output always fits.
// Everything is drawn from the seed libFuzzer passes, so a mutation repeats.
import CBOR
import Foundation
import JSON
import TestIssuer

@_silgen_name("LLVMFuzzerMutate")
func LLVMFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int) -> Int

/// What the bytes after a target's mode byte (or the whole input) are.
enum FuzzInputKind {
    case cbor
    case json
    /// Byte mutation only.
    case opaque
}

enum StructureMutator {
    /// One mutation in this many is structural; the rest are libFuzzer's own,
    /// which explore the parsers' branches far faster per execution.
    static let structuralOdds: UInt64 = 8

    /// `modeByte`: the first byte selects what the rest is (and is kept);
    /// `kind` says what the rest is for a given first byte (or, without a
    /// mode byte, for 0).
    static func mutate(
        _ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32, modeByte: Bool,
        kind: (UInt8) -> FuzzInputKind
    ) -> Int {
        var random = FuzzRandom(seed: UInt64(seed))
        let offset = modeByte ? 1 : 0
        guard size > offset, maxSize > offset, random.below(structuralOdds) == 0 else {
            return LLVMFuzzerMutate(data, size, maxSize)
        }
        let body = Array(UnsafeBufferPointer(start: data + offset, count: size - offset))
        let budget = maxSize - offset
        let mutated: [UInt8]?
        switch kind(modeByte ? data[0] : 0) {
        case .cbor: mutated = CBORMutation.apply(body, budget: budget, &random)
        case .json: mutated = JSONMutation.apply(body, budget: budget, &random)
        case .opaque: mutated = nil
        }
        guard let mutated, mutated.count <= budget, mutated != body else { return LLVMFuzzerMutate(data, size, maxSize) }
        mutated.withUnsafeBufferPointer { (data + offset).update(from: $0.baseAddress!, count: $0.count) }
        return offset + mutated.count
    }
}

/// The mutations' draws, from the test issuer's seeded generator: the same
/// sequence for the same seed everywhere.
struct FuzzRandom {
    private var generator: TestIssuer.SeededRandom

    init(seed: UInt64) { generator = TestIssuer.SeededRandom(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

    /// Uniform in 0..<bound (bound > 0).
    mutating func below(_ bound: UInt64) -> UInt64 { next() % bound }

    mutating func below(_ bound: Int) -> Int { Int(below(UInt64(bound))) }

    /// How many copies, at most `limit` (none when `limit` < 1: a mutation
    /// with no room left multiplies nothing rather than stopping the run). Mostly few (they find logic
    /// errors, and keep executions fast), often a few hundred (past the
    /// largest of libFuzzer's loop-count buckets, 128), sometimes any number
    /// up to all that fit, which is what finds the costs.
    mutating func count(upTo limit: Int) -> Int {
        guard limit >= 1 else { return 0 }
        switch below(8) {
        case 0..<4: return 1 + below(min(limit, 16))
        case 4, 5: return 1 + below(min(limit, 300))
        case 6: return 1 + below(limit)
        default: return limit
        }
    }
}

/// Multiplications of one dimension of a decoded CBOR item.
enum CBORMutation {
    /// Generous limits: the mutator must read what the verifier refuses, to grow it further.
    private static let decoder = CBORDecoder(limits: .init(maxDepth: 64, maxItems: 1 << 22, maxInputSize: 64 << 20))
    /// Room left for heads that grow with their counts and lengths.
    private static let slack = 64
    /// Copies per mutation at most; beyond the decoder's item limit already.
    private static let maxCopies = 250_000

    static func apply(_ bytes: [UInt8], budget: Int, _ random: inout FuzzRandom) -> [UInt8]? {
        guard let item = try? decoder.decode(bytes) else { return nil }
        var value = item.value
        var size = bytes.count
        // Sometimes two at once: many tag-24 items that are each big, many documents each with many keys.
        let rounds = random.below(3) == 0 ? 2 : 1
        var changed = false
        for _ in 0..<rounds {
            guard let next = mutateOnce(value, room: budget - size - slack, &random) else { continue }
            value = next
            size = value.encoded().count
            changed = true
        }
        guard changed else { return nil }
        let encoded = value.encoded()
        return encoded.count <= budget ? encoded : nil
    }

    private enum Operation: CaseIterable {
        case repeatElement, addKeys, repeatEntry, growString
    }

    private static func mutateOnce(_ value: CBOR, room: Int, _ random: inout FuzzRandom) -> CBOR? {
        guard room > 0 else { return nil }
        let operation = Operation.allCases[random.below(Operation.allCases.count)]
        let candidates = count(value, operation)
        guard candidates > 0 else { return nil }
        var target = random.below(candidates)
        var result: CBOR?
        let rewritten = rewrite(value, operation, &target) { node in
            result = apply(operation, to: node, room: room, &random)
            return result
        }
        return result == nil ? nil : rewritten
    }

    /// The CBOR inside a byte string, when the whole string is one array, map
    /// or tagged item (tag-24 items, the MSO, protected headers, DeviceSigned).
    private static func embedded(_ bytes: [UInt8]) -> CBOR? {
        guard let first = bytes.first, (0x80...0xdf).contains(first), let item = try? decoder.decode(bytes) else { return nil }
        return item.value
    }

    private static func isCandidate(_ value: CBOR, _ operation: Operation) -> Bool {
        switch (operation, value) {
        case (.repeatElement, .array(let items)): !items.isEmpty
        case (.addKeys, .map): true
        case (.repeatEntry, .map(let entries)): !entries.isEmpty
        case (.growString, .text): true
        case (.growString, .bytes(let bytes)): embedded(bytes) == nil
        default: false
        }
    }

    private static func count(_ value: CBOR, _ operation: Operation) -> Int {
        var total = isCandidate(value, operation) ? 1 : 0
        switch value {
        case .array(let items): for item in items { total += count(item, operation) }
        case .map(let entries): for entry in entries { total += count(entry.key, operation) + count(entry.value, operation) }
        case .tagged(_, let inner): total += count(inner, operation)
        case .bytes(let bytes): if let inner = embedded(bytes) { total += count(inner, operation) }
        default: break
        }
        return total
    }

    /// `value` with the `target`-th candidate (pre-order) replaced by `change`'s
    /// answer; `target` counts down to it.
    private static func rewrite(_ value: CBOR, _ operation: Operation, _ target: inout Int, _ change: (CBOR) -> CBOR?) -> CBOR {
        guard target >= 0 else { return value }
        if isCandidate(value, operation) {
            if target == 0 {
                target = -1
                return change(value) ?? value
            }
            target -= 1
        }
        switch value {
        case .array(let items):
            var out: [CBOR] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(rewrite(item, operation, &target, change)) }
            return .array(out)
        case .map(let entries):
            var out: [CBOR.MapEntry] = []
            out.reserveCapacity(entries.count)
            for entry in entries {
                let key = rewrite(entry.key, operation, &target, change)
                out.append(.init(key, rewrite(entry.value, operation, &target, change)))
            }
            return .map(out)
        case .tagged(let tag, let inner):
            return .tagged(tag, rewrite(inner, operation, &target, change))
        case .bytes(let bytes):
            guard target >= 0, let inner = embedded(bytes) else { return value }
            return .bytes(rewrite(inner, operation, &target, change).encoded())
        default:
            return value
        }
    }

    private static func apply(_ operation: Operation, to node: CBOR, room: Int, _ random: inout FuzzRandom) -> CBOR? {
        switch (operation, node) {
        case (.repeatElement, .array(var items)):
            let index = random.below(items.count)
            let unit = items[index].encoded().count
            guard room / unit >= 1 else { return nil }
            let copies = random.count(upTo: min(room / unit, maxCopies))
            items.insert(contentsOf: repeatElement(items[index], count: copies), at: index + 1)
            return .array(items)
        case (.addKeys, .map(var entries)):
            // Keys unlike any the verifier reads; values of a few kinds, since skipping one decodes it.
            let values: [CBOR] = [0, "", .bytes([]), .array([]), .map([]), .tagged(24, .bytes([0xa0]))]
            let value = values[random.below(values.count)]
            let prefix = "x\(random.below(1000))-"
            let unit = prefix.utf8.count + 8 + value.encoded().count
            guard room / unit >= 1 else { return nil }
            let copies = random.count(upTo: min(room / unit, maxCopies))
            entries.reserveCapacity(entries.count + copies)
            for index in 0..<copies { entries.append(.init(.text(prefix + String(index, radix: 36)), value)) }
            return .map(entries)
        case (.repeatEntry, .map(var entries)):
            // A namespace (or any entry) again under new names: many namespaces, many documents' worth of digests.
            let entry = entries[random.below(entries.count)]
            let base: String = if case .text(let name) = entry.key { name } else { "k" }
            let unit = entry.encoded().count + 8
            guard room / unit >= 1 else { return nil }
            let copies = random.count(upTo: min(room / unit, maxCopies))
            entries.reserveCapacity(entries.count + copies)
            for index in 0..<copies { entries.append(.init(.text("\(base).\(index)"), entry.value)) }
            return .map(entries)
        case (.growString, .text(let text)):
            let extra = random.count(upTo: room)
            return .text(text + String(repeating: "a", count: extra))
        case (.growString, .bytes(var bytes)):
            let extra = random.count(upTo: room)
            bytes.append(contentsOf: repeatElement(UInt8(truncatingIfNeeded: random.next()), count: extra))
            return .bytes(bytes)
        default:
            return nil
        }
    }
}

extension CBOR.MapEntry {
    fileprivate func encoded() -> [UInt8] { CBOR.map([self]).encoded() }
}

/// Multiplications of one dimension of a JSON event.
enum JSONMutation {
    private static let slack = 64
    private static let maxCopies = 250_000

    static func apply(_ bytes: [UInt8], budget: Int, _ random: inout FuzzRandom) -> [UInt8]? {
        guard case .object(var event)? = try? JSONParser().parse(bytes) else { return nil }
        let room = budget - bytes.count - slack
        guard room > 0 else { return nil }
        switch random.below(4) {
        case 0:
            // CloudEvents extension attributes: lowercase alphanumeric names.
            let values: [JSONValue] = [.string("x"), .integer(1), .object(JSONObject()), .array([])]
            let value = values[random.below(values.count)]
            let prefix = "ext\(random.below(1000))x"
            let unit = prefix.utf8.count + 12 + JSONWriter().bytes(value).count
            guard room / unit >= 1 else { return nil }
            for index in 0..<random.count(upTo: min(room / unit, maxCopies)) { event[prefix + String(index, radix: 36)] = value }
        case 1:
            guard case .object(var data)? = event["data"] else { return nil }
            let existing = data["requestedElements"]?.arrayValue ?? []
            let template = existing.isEmpty ? defaultElement : existing[random.below(existing.count)]
            let distinct = random.below(2) == 0
            let unit = JSONWriter().bytes(template).count + 8
            guard room / unit >= 1 else { return nil }
            var elements = existing
            for index in 0..<random.count(upTo: min(room / unit, maxCopies)) {
                guard distinct, case .object(var element) = template else { elements.append(template); continue }
                element["element"] = .string("e\(index)")
                elements.append(.object(element))
            }
            data["requestedElements"] = .array(elements)
            event["data"] = .object(data)
        case 2:
            guard case .object(var data)? = event["data"] else { return nil }
            let unit = 16
            for index in 0..<random.count(upTo: min(room / unit, maxCopies)) { data["u\(index)"] = .integer(0) }
            event["data"] = .object(data)
        default:
            // The DeviceResponse of an iso-device-response event, multiplied as CBOR.
            guard case .object(var data)? = event["data"], let text = data["payload"]?.stringValue,
                  let decoded = Data(base64Encoded: text),
                  let mutated = CBORMutation.apply(Array(decoded), budget: decoded.count + room * 3 / 4, &random)
            else { return nil }
            data["payload"] = .string(Data(mutated).base64EncodedString())
            event["data"] = .object(data)
        }
        return JSONWriter(keyOrder: .insertion).bytes(.object(event))
    }

    private static let defaultElement: JSONValue = .object([
        "namespace": "org.iso.18013.5.1", "element": "family_name", "retention": .object(["intent": "willNotStore"]),
    ])
}
