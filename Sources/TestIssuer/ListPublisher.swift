import CBOR
import Crypto
import MDoc

extension TestIssuer {
    /// Builds signed Status List Tokens (draft-ietf-oauth-status-list §5.2)
    /// and identifier list tokens (ISO 18013-5 §12.3.6.4), valid or with one
    /// chosen defect.
    ///
    /// It writes the media types, claim keys and bit layout from the texts
    /// themselves, not from the StatusList module it tests, so a mistake
    /// there is not copied here.
    public struct ListPublisher: Sendable {
        /// Each kind's raw value is its media type.
        public enum Kind: String, Sendable, CaseIterable {
            case statusList = "application/statuslist+cwt"
            case identifierList = "application/identifierlist+cwt"

            public var mediaType: String { rawValue }
        }

        /// What the list claim holds.
        public enum Content: Sendable {
            /// One status per entry, packed `bits` to an entry, least significant bit first, then zlib-compressed.
            case statuses(bits: Int, [UInt8])
            /// `lst` exactly as given (a zlib bomb, garbage), with `bits`.
            case compressedStatuses(bits: Int, lst: [UInt8])
            /// Each identifier a key of the `identifiers` map, with an empty IdentifierInfo.
            case identifiers([[UInt8]])
        }

        /// The protected `typ`.
        public enum TypeHeader: Sendable {
            /// The kind's media type.
            case kind
            case absent
            case text(String)
            /// In the unprotected header only, where it protects nothing.
            case unprotected
        }

        public var kind: Kind
        public var content: Content
        /// `sub`; nil leaves it out.
        public var subject: String?
        /// `iat` and `exp` in seconds since 1970; nil leaves them out.
        public var issuedAt: Int64?
        public var expiresAt: Int64?
        public var timeToLive: UInt64?
        public var issuer: String?
        public var aggregationURI: String?
        public var type: TypeHeader = .kind
        /// The tag around the COSE_Sign1: 18 as the draft requires, nil for
        /// untagged (draft -14), 17 or 61 for the tags a list must not have.
        public var tag: UInt64? = 18
        /// More claims, after the others (the other kind's list claim, unknown ones).
        public var extraClaims: [CBOR.MapEntry] = []
        /// The algorithm to name; nil: the one for the key's type.
        public var algorithm: COSESignatureAlgorithm?
        /// Where `x5chain` goes (RFC 9360 lets it be in either header).
        public var x5chainProtected = true
        /// Signed as the payload instead of `claims()`: claims sets no field
        /// here writes (indefinite lengths, duplicate keys, another shape).
        public var payloadOverride: [UInt8]?

        public init(kind: Kind, content: Content, subject: String?, issuedAt: Int64?, expiresAt: Int64?, timeToLive: UInt64? = 43_200) {
            self.kind = kind
            self.content = content
            self.subject = subject
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
            self.timeToLive = timeToLive
        }

        /// The token, signed by `key`, with `chain` (leaf first) as its
        /// `x5chain`: one certificate as a bstr, more as an array, none omitted.
        public func signed(by key: PrivateKey, chain: [Certificate]) throws -> [UInt8] {
            let algorithm = algorithm ?? COSESignatureAlgorithm.preferred(for: key.type)
            var protected: [CBOR.MapEntry] = [.init(1, .int(algorithm.rawValue))]
            var unprotected: [CBOR.MapEntry] = []
            switch type {
            case .kind: protected.append(.init(16, .text(kind.mediaType)))
            case .absent: break
            case .text(let text): protected.append(.init(16, .text(text)))
            case .unprotected: unprotected.append(.init(16, .text(kind.mediaType)))
            }
            if !chain.isEmpty {
                let x5chain: CBOR = chain.count == 1 ? .bytes(chain[0].der) : .array(chain.map { .bytes($0.der) })
                if x5chainProtected {
                    protected.append(.init(33, x5chain))
                } else {
                    unprotected.append(.init(33, x5chain))
                }
            }
            let protectedBytes = CBOR.map(protected).encoded()
            let payload = try payloadOverride ?? claims().encoded()
            // Written here as COSESign1.sign writes it, so the verifier's
            // Sig_structure is checked against an encoding of its own.
            let toBeSigned = CBOR.array(["Signature1", .bytes(protectedBytes), .bytes([]), .bytes(payload)]).encoded()
            let signature = try key.signature(for: toBeSigned, hash: algorithm.hash)
            let message = CBOR.array([.bytes(protectedBytes), .map(unprotected), .bytes(payload), .bytes(signature)])
            return (tag.map { CBOR.tagged($0, message) } ?? message).encoded()
        }

        /// The CWT claims set.
        public func claims() throws -> CBOR {
            var entries: [CBOR.MapEntry] = []
            if let subject { entries.append(.init(2, .text(subject))) }
            if let issuedAt { entries.append(.init(6, .int(issuedAt))) }
            if let expiresAt { entries.append(.init(4, .int(expiresAt))) }
            if let timeToLive { entries.append(.init(65534, .unsigned(timeToLive))) }
            if let issuer { entries.append(.init(1, .text(issuer))) }
            entries.append(try listClaim())
            return .map(entries + extraClaims)
        }

        private func listClaim() throws -> CBOR.MapEntry {
            var list: [CBOR.MapEntry]
            switch content {
            case .statuses(let bits, let values):
                list = [.init("bits", .unsigned(UInt64(bits))), .init("lst", .bytes(try Zlib.compress(try Self.pack(values, bits: bits))))]
            case .compressedStatuses(let bits, let lst):
                list = [.init("bits", .unsigned(UInt64(bits))), .init("lst", .bytes(lst))]
            case .identifiers(let identifiers):
                list = [.init("identifiers", .preEncoded(Self.identifierMap(identifiers)))]
            }
            if let aggregationURI { list.append(.init("aggregation_uri", .text(aggregationURI))) }
            return .init(kind == .statusList ? 65533 : 65530, .map(list))
        }

        /// Draft §4.1: entry `i` in byte `i * bits / 8`, from the least significant bit.
        public static func pack(_ values: [UInt8], bits: Int) throws -> [UInt8] {
            guard [1, 2, 4, 8].contains(bits) else { throw FixtureError("bits is 1, 2, 4 or 8") }
            var bytes = [UInt8](repeating: 0, count: (values.count * bits + 7) / 8)
            for (index, value) in values.enumerated() {
                guard Int(value) < 1 << bits else { throw FixtureError("status \(value) does not fit \(bits) bits") }
                bytes[index * bits / 8] |= value << UInt8(index * bits % 8)
            }
            return bytes
        }

        /// `{* bstr => {}}`, written directly: a million entries as `CBOR`
        /// values would cost an allocation each.
        static func identifierMap(_ identifiers: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(identifiers.reduce(9) { $0 + $1.count + 10 })
            CBOR.appendHead(major: 5, UInt64(identifiers.count), to: &out)
            for id in identifiers {
                CBOR.appendHead(major: 2, UInt64(id.count), to: &out)
                out.append(contentsOf: id)
                CBOR.appendHead(major: 5, 0, to: &out)
            }
            return out
        }
    }
}
