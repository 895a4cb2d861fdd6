import Crypto
import Foundation
import MDoc
import Postgres
import Storage
import Verification

/// What the write path needs from retention: per disclosed element the
/// metadata row (always) and, for mayStore elements of verified results,
/// the encrypted value row. willNotStore values produce no value row at all:
/// not a digest, not a length.
public struct RetentionWriter: Sendable {
    public let directory: TenantDirectory
    public let keys: DataKeyRing?
    public let partitions: ValuePartitions

    public init(directory: TenantDirectory, keys: DataKeyRing?, partitions: ValuePartitions = ValuePartitions()) {
        self.directory = directory
        self.keys = keys
        self.partitions = partitions
    }

    public struct Decided: Sendable {
        public let element: DisclosedElement
        public let requested: Bool
        public let decision: RetentionDecision
    }

    /// Names are the same when their bytes are (`Identifier`): lookalike
    /// spellings are different elements, as the issuer signed them.
    private struct ElementName: Hashable {
        let namespace: Identifier
        let element: Identifier
    }

    /// The (namespace, element) pairs met so far. A document discloses a few
    /// dozen elements, whose fingerprints are compared in a list: a hashed
    /// set would hash both strings with SipHash for every element, a large
    /// part of deciding. Past `listLimit` the set keeps hostile responses linear.
    private struct SeenNames {
        static let listLimit = 48
        private var list: [(fingerprint: UInt64, name: ElementName)] = []
        private var set: Set<ElementName>?

        init(count: Int) {
            if count > Self.listLimit { set = Set(minimumCapacity: count) } else { list.reserveCapacity(count) }
        }

        mutating func insert(_ name: ElementName) -> Bool {
            if set != nil { return set!.insert(name).inserted }
            let fingerprint = Self.fingerprint(name)
            if list.contains(where: { $0.fingerprint == fingerprint && $0.name == name }) {
                return false
            }
            list.append((fingerprint, name))
            return true
        }

        /// FNV-1a over both names' bytes: equal names have equal fingerprints.
        private static func fingerprint(_ name: ElementName) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            mix(name.namespace.text, into: &hash)
            mix(name.element.text, into: &hash)
            return hash
        }

        private static func mix(_ text: String, into hash: inout UInt64) {
            var text = text
            var h = hash
            text.withUTF8 { bytes in
                for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            // 0xff is no UTF-8 byte: "ab" + "c" and "a" + "bc" differ.
            hash = (h ^ 0xff) &* 0x100_0000_01b3
        }
    }

    /// One decision per distinct disclosed (namespace, element), in disclosure order.
    public func decisions(for result: VerificationResult) -> [Decided] {
        let policy = result.tenant.flatMap { directory[$0]?.retention } ?? .none
        let count = result.documents.reduce(0) { $0 + $1.elements.count }
        var seen = SeenNames(count: count)
        let requested = RequestedElementIndex(result.requestedElements)
        var decided: [Decided] = []
        decided.reserveCapacity(count)
        for summary in result.documents {
            for element in summary.elements where seen.insert(ElementName(namespace: Identifier(element.namespace), element: Identifier(element.identifier))) {
                let asked = requested[namespace: element.namespace, element: element.identifier]
                let decision = RetentionPolicy.decide(
                    namespace: element.namespace, element: element.identifier, asked: asked, anyRequested: !result.requestedElements.isEmpty,
                    tenant: policy, base: result.verifiedAt)
                decided.append(Decided(element: element, requested: asked != nil, decision: decision))
            }
        }
        return decided
    }

    public func elementGroups(for result: VerificationResult) -> [ElementGroupsColumn.Group] {
        elementGroups(for: result, decided: decisions(for: result))
    }

    /// The element groups (`ElementGroupsColumn.Value` makes the results
    /// row's column of them) from decisions already made for `result`:
    /// the elements of one namespace with the same decision share a group, in
    /// the order of their first element, each listing its names in disclosure
    /// order. An event of Apple's kind discloses ~23 elements under 3 or 4
    /// decisions; a row per element would be most of the server's CPU per event.
    public func elementGroups(for result: VerificationResult, decided: [Decided]) -> [ElementGroupsColumn.Group] {
        guard result.requestID != nil else { return [] }
        var groups = ElementGroups()
        for item in decided { groups.add(item) }
        return groups.all.map { group in
            let retention: ElementGroupsColumn.Retention = switch group.key.decision.retention {
            case .willNotStore: .willNotStore
            case .mayStore(let limit): .mayStore(days: limit)
            }
            return ElementGroupsColumn.Group(namespace: group.key.namespace.text, elements: group.elements, requested: group.key.requested,
                                             retention: retention, source: group.key.decision.source.rawValue,
                                             capped: group.key.decision.capped, retainUntil: group.key.decision.expiry.map(Self.retainUntil))
        }
    }

    /// Decided elements gathered by (namespace, requested, decision), names as stored.
    private struct ElementGroups {
        struct Key: Hashable {
            let namespace: Identifier
            let requested: Bool
            let decision: RetentionDecision
        }

        private(set) var all: [(key: Key, elements: [String])] = []
        /// Built once there are more groups than a short list search suits
        /// (a hostile response can name thousands of namespaces).
        private var index: [Key: Int]?
        private static let listLimit = 16

        mutating func add(_ item: Decided) {
            let key = Key(namespace: Identifier(PostgresValue.storable(item.element.namespace)), requested: item.requested, decision: item.decision)
            let name = PostgresValue.storable(item.element.identifier)
            if let position = position(of: key) {
                all[position].elements.append(name)
                return
            }
            all.append((key, [name]))
            if index != nil {
                index![key] = all.count - 1
            } else if all.count > Self.listLimit {
                index = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.key, $0) })
            }
        }

        private func position(of key: Key) -> Int? {
            if let index { return index[key] }
            // Consecutive elements mostly share a group: the last one first.
            if let last = all.indices.last, all[last].key == key { return last }
            return all.firstIndex { $0.key == key }
        }
    }

    public struct ValueRows: Sendable {
        public var rows: [ElementValuesTable.Row] = []
        /// The finite retain_until instants, for `ValuePartitions.ensure`.
        public var expiries: [Date] = []

        public init() {}
    }

    /// Encrypted value rows of a verified result; none without data keys.
    public func valueRows(for result: VerificationResult, storedAt: Date) throws(CryptoError) -> ValueRows {
        try valueRows(for: result, decided: decisions(for: result), storedAt: storedAt)
    }

    /// The value rows from decisions already made for `result`. Released
    /// values (`VerificationResult.releasingElementValues()`) have none: the
    /// worker releases only what it has sealed.
    public func valueRows(for result: VerificationResult, decided: [Decided], storedAt: Date) throws(CryptoError) -> ValueRows {
        var out = ValueRows()
        guard let keys, result.isAccepted, let id = result.requestID, let tenant = result.tenant else { return out }
        for item in decided {
            guard let expiry = item.decision.expiry, let value = item.element.value else { continue }
            // Sealed under the names as stored, so that reading a value back binds to its row.
            let namespace = PostgresValue.storable(item.element.namespace), element = PostgresValue.storable(item.element.identifier)
            let sealed = try ValueCipher.seal(Array(value.encoded), eventID: id, namespace: namespace, element: element, keys: keys)
            out.rows.append(ElementValuesTable.Row(eventID: id, tenant: tenant, namespace: namespace, element: element, keyID: sealed.keyID,
                                                   nonce: sealed.nonce, ciphertext: sealed.ciphertext, retainUntil: Self.retainUntil(expiry),
                                                   storedAt: storedAt))
            if case .at(let date) = expiry { out.expiries.append(date) }
        }
        return out
    }

    /// The key outcomes of this result's tenant are sealed to, if any.
    public func outcomeRecipient(for result: VerificationResult) -> PublicKey? {
        result.tenant.flatMap { directory[$0]?.outcomeRecipientKey }
    }

    static func retainUntil(_ expiry: Expiry) -> RetainUntil {
        switch expiry {
        case .never: .never
        case .at(let date): .at(date)
        }
    }
}
