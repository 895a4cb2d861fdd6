import CBOR
import Crypto
import Foundation
import MDoc
import StatusList
import TestIssuer
import Testing

/// Tokens the test issuer publishes: what parses, and each defect refused at its step.
struct ListTokenTests {
    @Test func statusListRoundTrip() throws {
        let world = try ListWorld()
        var publisher = world.publisher(.statusList, .statuses(bits: 2, [0, 1, 2, 3, 2, 1, 0, 0]))
        publisher.issuer = "https://issuer.example"
        publisher.aggregationURI = "https://lists.example/aggregation"
        publisher.extraClaims = [.init(99, "unknown"), .init("text-claim", 1), .init(-3, .bytes([1]))]
        let token = try ListToken(bytes: world.token(publisher), kind: .statusList)

        #expect(token.kind == .statusList)
        #expect(token.subject == ListWorld.uri)
        #expect(token.issuedAt == world.now - 60)
        #expect(token.expiresAt == world.now + 86_400)
        #expect(token.timeToLive == 43_200)
        #expect(token.issuer == "https://issuer.example")
        #expect(token.aggregationURI == "https://lists.example/aggregation")
        #expect(token.signerChain == [world.listSigner.certificate])
        #expect(token.identifiers == nil)
        #expect(token.statusList?.status(at: 3) == 3)
        try token.verifySignature(with: world.listSigner.key.publicKey)
        try token.checkValidity(at: world.now, allowedClockSkew: 0)
        try token.checkSubject(ListWorld.uri)
    }

    @Test func identifierListRoundTrip() throws {
        let world = try ListWorld()
        let revoked: [[UInt8]] = [[UInt8](repeating: 0xaa, count: 32), [1], [UInt8](repeating: 7, count: 64)]
        var publisher = world.publisher(.identifierList, .identifiers(revoked))
        publisher.aggregationURI = "https://lists.example/aggregation"
        let token = try ListToken(bytes: world.token(publisher), kind: .identifierList)

        #expect(token.kind == .identifierList)
        #expect(token.statusList == nil)
        #expect(token.aggregationURI == "https://lists.example/aggregation")
        let identifiers = try #require(token.identifiers)
        #expect(identifiers.count == 3)
        for id in revoked { #expect(identifiers.contains(id)) }
        #expect(identifiers.contains(ArraySlice(revoked[0])))
        #expect(!identifiers.contains([UInt8](repeating: 0xaa, count: 31)))
        #expect(!identifiers.contains([2]))
        #expect(!identifiers.contains([]))
        try token.verifySignature(with: world.listSigner.key.publicKey)
    }

    @Test func emptyIdentifierList() throws {
        let world = try ListWorld()
        let token = try ListToken(bytes: world.token(world.publisher(.identifierList, .identifiers([]))), kind: .identifierList)
        #expect(token.identifiers?.count == 0)
        #expect(token.identifiers?.contains([1]) == false)
    }

    /// The claims set written with indefinite lengths (an identifiers map
    /// and a chunked identifier) is read by the decoder instead of in place,
    /// to the same set.
    @Test func indefiniteLengthIdentifierList() throws {
        let world = try ListWorld()
        var identifiers: [UInt8] = [0xbf]
        identifiers += CBOR.bytes([1, 2, 3]).encoded() + [0xa0]
        identifiers += [0x5f, 0x42, 4, 5, 0x41, 6, 0xff, 0xa0]
        identifiers += [0xff]
        let claims = CBOR.map([
            .init(2, .text(ListWorld.uri)), .init(6, .int(world.seconds - 60)), .init(4, .int(world.seconds + 600)),
            .init(65530, .map([.init("identifiers", .preEncoded(identifiers))])),
        ])
        var publisher = world.publisher(.identifierList, .identifiers([]))
        publisher.payloadOverride = claims.encoded()
        let token = try ListToken(bytes: world.token(publisher), kind: .identifierList)
        let set = try #require(token.identifiers)
        #expect(set.count == 2)
        #expect(set.contains([1, 2, 3]))
        #expect(set.contains([4, 5, 6]))
        #expect(!set.contains([4, 5]))
        try token.verifySignature(with: world.listSigner.key.publicKey)
    }

    /// Each defect, and the step that refuses it.
    @Test func defects() throws {
        let world = try ListWorld()
        let statuses = TestIssuer.ListPublisher.Content.statuses(bits: 1, [1, 0, 1])
        let ids = TestIssuer.ListPublisher.Content.identifiers([[1, 2, 3]])
        typealias Publisher = TestIssuer.ListPublisher
        func variant(_ kind: Publisher.Kind, _ content: Publisher.Content, _ change: (inout Publisher) -> Void) -> Publisher {
            var publisher = world.publisher(kind, content)
            change(&publisher)
            return publisher
        }
        let cases: [(String, Publisher, ListKind, String)] = [
            ("typ absent", variant(.statusList, statuses) { $0.type = .absent }, .statusList, "media_type"),
            ("typ of the other kind", variant(.statusList, statuses) { $0.type = .text("application/identifierlist+cwt") }, .statusList, "media_type"),
            ("typ without +cwt", variant(.statusList, statuses) { $0.type = .text("application/statuslist") }, .statusList, "media_type"),
            ("typ of the JWT form", variant(.identifierList, ids) { $0.type = .text("statuslist+jwt") }, .identifierList, "media_type"),
            ("typ unprotected only", variant(.identifierList, ids) { $0.type = .unprotected }, .identifierList, "media_type"),
            ("untagged", variant(.statusList, statuses) { $0.tag = nil }, .statusList, "token"),
            ("CWT tag 61", variant(.statusList, statuses) { $0.tag = 61 }, .statusList, "token"),
            ("COSE_Mac0 tag", variant(.statusList, statuses) { $0.tag = 17 }, .statusList, "mac"),
            ("no sub", variant(.statusList, statuses) { $0.subject = nil }, .statusList, "sub"),
            ("no iat", variant(.identifierList, ids) { $0.issuedAt = nil }, .identifierList, "iat"),
            ("no exp", variant(.statusList, statuses) { $0.expiresAt = nil }, .statusList, "exp"),
            ("no exp in an identifier list", variant(.identifierList, ids) { $0.expiresAt = nil }, .identifierList, "exp"),
            ("ttl 0", variant(.statusList, statuses) { $0.timeToLive = 0 }, .statusList, "claims"),
            ("status claim in an identifier list", variant(.identifierList, ids) {
                $0.extraClaims = [.init(65533, .map([.init("bits", 1), .init("lst", .bytes([0x78, 0xda, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]))]))]
            }, .identifierList, "claims"),
            ("identifier claim in a status list", variant(.statusList, statuses) {
                $0.extraClaims = [.init(65530, .map([.init("identifiers", .map([]))]))]
            }, .statusList, "claims"),
            ("no list claim", variant(.statusList, ids) { _ in }, .statusList, "claims"),
            ("identifier over 64 bytes", variant(.identifierList, .identifiers([[UInt8](repeating: 1, count: 65)])) { _ in }, .identifierList, "claims"),
            ("empty identifier", variant(.identifierList, .identifiers([[]])) { _ in }, .identifierList, "claims"),
            ("duplicate identifier", variant(.identifierList, .identifiers([[1, 2], [3], [1, 2]])) { _ in }, .identifierList, "token"),
            ("bits 3", variant(.statusList, .compressedStatuses(bits: 3, lst: try TestIssuer.Zlib.compress([0]))) { _ in }, .statusList, "claims"),
            ("lst not zlib", variant(.statusList, .compressedStatuses(bits: 1, lst: [1, 2, 3])) { _ in }, .statusList, "decompression"),
            ("lst with trailing bytes", variant(.statusList, .compressedStatuses(bits: 1, lst: try TestIssuer.Zlib.compress([1]) + [0])) { _ in },
             .statusList, "decompression"),
        ]
        for (name, publisher, kind, step) in cases {
            let bytes = try world.token(publisher)
            #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: kind) }?.step == step, "\(name)")
        }
    }

    /// Claims sets no publisher field writes.
    @Test func malformedClaimsSets() throws {
        let world = try ListWorld()
        let lst = CBOR.map([.init("bits", 1), .init("lst", .bytes(try TestIssuer.Zlib.compress([1])))])
        let base: [CBOR.MapEntry] = [.init(2, .text(ListWorld.uri)), .init(6, .int(world.seconds)), .init(4, .int(world.seconds + 60))]
        let cases: [(String, [UInt8], String)] = [
            ("an array", CBOR.array([1, 2]).encoded(), "token"),
            ("a duplicate claim", CBOR.map(base + [.init(65533, lst), .init(6, 1)]).encoded(), "token"),
            ("trailing bytes", CBOR.map(base + [.init(65533, lst)]).encoded() + [0], "token"),
            ("sub as bytes", CBOR.map([.init(2, .bytes([1])), .init(6, 1), .init(4, 2), .init(65533, lst)]).encoded(), "sub"),
            ("iat as text", CBOR.map([.init(2, .text(ListWorld.uri)), .init(6, "now"), .init(4, 2), .init(65533, lst)]).encoded(), "iat"),
            ("exp as a float", CBOR.map([.init(2, .text(ListWorld.uri)), .init(6, 1), .init(4, .float(2.5)), .init(65533, lst)]).encoded(), "exp"),
            ("iss as a number", CBOR.map(base + [.init(1, 5), .init(65533, lst)]).encoded(), "claims"),
            ("ttl negative", CBOR.map(base + [.init(65534, -5), .init(65533, lst)]).encoded(), "claims"),
            ("status list not a map", CBOR.map(base + [.init(65533, .bytes([1]))]).encoded(), "claims"),
        ]
        for (name, payload, step) in cases {
            var publisher = world.publisher(.statusList, .statuses(bits: 1, [1]))
            publisher.payloadOverride = payload
            let bytes = try world.token(publisher)
            #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .statusList) }?.step == step, "\(name)")
        }
        // The same claim key once as 0x06 and once as 0x18 0x06 is one key twice.
        var duplicate: [UInt8] = [0xa5]
        duplicate += CBOR.int(2).encoded() + CBOR.text(ListWorld.uri).encoded()
        duplicate += [0x06] + CBOR.int(world.seconds).encoded()
        duplicate += [0x18, 0x06] + CBOR.int(world.seconds).encoded()
        duplicate += [0x04] + CBOR.int(world.seconds + 60).encoded()
        duplicate += CBOR.int(65533).encoded() + lst.encoded()
        var publisher = world.publisher(.statusList, .statuses(bits: 1, [1]))
        publisher.payloadOverride = duplicate
        let bytes = try world.token(publisher)
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .statusList) }?.step == "token")
    }

    @Test func identifierMapShapes() throws {
        let world = try ListWorld()
        let cases: [(String, CBOR, String)] = [
            ("identifiers not a map", .map([.init("identifiers", .array([.bytes([1])]))]), "claims"),
            ("an identifier as text", .map([.init("identifiers", .map([.init("id", .map([]))]))]), "claims"),
            ("info not a map", .map([.init("identifiers", .map([.init(.bytes([1]), 1)]))]), "claims"),
            ("no identifiers", .map([.init("aggregation_uri", "https://lists.example/a")]), "claims"),
            ("aggregation_uri not text", .map([.init("identifiers", .map([])), .init("aggregation_uri", 1)]), "claims"),
            ("the claim not a map", .array([]), "claims"),
        ]
        for (name, claim, step) in cases {
            var publisher = world.publisher(.identifierList, .identifiers([]))
            publisher.payloadOverride = CBOR.map([
                .init(2, .text(ListWorld.uri)), .init(6, .int(world.seconds)), .init(4, .int(world.seconds + 60)), .init(65530, claim),
            ]).encoded()
            let bytes = try world.token(publisher)
            #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .identifierList) }?.step == step, "\(name)")
        }
        // IdentifierInfo contents and other keys of the claim are reserved: ignored.
        var publisher = world.publisher(.identifierList, .identifiers([]))
        publisher.payloadOverride = CBOR.map([
            .init(2, .text(ListWorld.uri)), .init(6, .int(world.seconds)), .init(4, .int(world.seconds + 60)),
            .init(65530, .map([.init("future", 1), .init("identifiers", .map([.init(.bytes([9]), .map([.init("reason", 1)]))]))])),
        ]).encoded()
        let token = try ListToken(bytes: world.token(publisher), kind: .identifierList)
        #expect(token.identifiers?.contains([9]) == true)
    }

    @Test func limits() throws {
        let world = try ListWorld()
        let bytes = try world.token(world.publisher(.identifierList, .identifiers([[1], [2], [3]])))
        _ = try ListToken(bytes: bytes, kind: .identifierList, limits: ListLimits(maxIdentifiers: 3))
        let tooMany = listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .identifierList, limits: ListLimits(maxIdentifiers: 2)) }
        #expect(tooMany?.step == "claims")
        let tooLarge = listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .identifierList, limits: ListLimits(maxTokenBytes: bytes.count - 1)) }
        #expect(tooLarge?.step == "token")
        let shorter = listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .identifierList, limits: ListLimits(maxIdentifierLength: 0)) }
        #expect(shorter?.step == "claims")
    }

    @Test func notCBOR() throws {
        for bytes: [UInt8] in [[], [0xd2], [0xd2, 0x84, 0x40], Array("not a token".utf8), [0xd2, 0x84, 0x40, 0xa0, 0x40, 0x40, 0x00]] {
            #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .statusList) }?.step == "token", "\(bytes)")
        }
    }

    /// An algorithm Veridoc does not verify with (PS256) is refused at parse,
    /// as the signature step: no key could make the token valid.
    @Test func unknownAlgorithm() throws {
        let world = try ListWorld()
        let protected = CBOR.map([.init(1, -37), .init(16, "application/statuslist+cwt")]).encoded()
        let payload = try world.publisher(.statusList, .statuses(bits: 1, [1])).claims().encoded()
        let token = CBOR.tagged(18, .array([.bytes(protected), .map([]), .bytes(payload), .bytes([UInt8](repeating: 1, count: 64))])).encoded()
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: token, kind: .statusList) }?.step == "signature")
    }

    /// An algorithm the key cannot make fails the signature step.
    @Test func algorithms() throws {
        let world = try ListWorld()
        var publisher = world.publisher(.statusList, .statuses(bits: 1, [1]))
        publisher.algorithm = .es384
        let mismatched = try ListToken(bytes: world.token(publisher), kind: .statusList)
        #expect(listError { () throws(StatusListError) in try mismatched.verifySignature(with: world.listSigner.key.publicKey) }?.step == "signature")

        let edKey = try PrivateKey.generateEd25519()
        publisher.algorithm = nil
        let ed = try ListToken(bytes: publisher.signed(by: edKey, chain: []), kind: .statusList)
        #expect(ed.algorithm == .edDSA)
        try ed.verifySignature(with: edKey.publicKey)
        #expect(listError { () throws(StatusListError) in try ed.verifySignature(with: world.listSigner.key.publicKey) }?.step == "signature")
    }

    @Test func validityWindow() throws {
        let world = try ListWorld()
        let token = try ListToken(bytes: world.token(world.publisher(.statusList, .statuses(bits: 1, [1]))), kind: .statusList)
        try token.checkValidity(at: world.now - 60, allowedClockSkew: 0)
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: world.now - 61, allowedClockSkew: 0) }?.step == "iat")
        try token.checkValidity(at: world.now - 90, allowedClockSkew: 30)
        try token.checkValidity(at: world.now + 86_399, allowedClockSkew: 0)
        // The skew is not granted past exp.
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: world.now + 86_400, allowedClockSkew: 300) }?.step == "exp")
    }

    /// An identifier list may say it holds for 365 days at most; a status list is not bounded here.
    @Test func identifierListValidityBound() throws {
        let world = try ListWorld()
        let year: Int64 = 365 * 86_400
        for (kind, length, step) in [(TestIssuer.ListPublisher.Kind.identifierList, year, nil), (.identifierList, year + 1, "exp"),
                                     (.statusList, year + 1, nil), (.identifierList, 0, "exp"), (.statusList, -1, "exp")] as [(TestIssuer.ListPublisher.Kind, Int64, String?)] {
            var publisher = world.publisher(kind, kind == .statusList ? .statuses(bits: 1, [1]) : .identifiers([[1]]))
            publisher.issuedAt = world.seconds - 60
            publisher.expiresAt = world.seconds - 60 + length
            let token = try ListToken(bytes: world.token(publisher), kind: kind == .statusList ? .statusList : .identifierList)
            let error = listError { () throws(StatusListError) in try token.checkValidity(at: world.now - 60, allowedClockSkew: 0) }
            #expect(error?.step == step, "\(kind) valid for \(length) s")
        }
    }

    /// `sub` is compared as bytes: a canonically equivalent spelling is another URI.
    @Test func subjectIsComparedByteForByte() throws {
        let world = try ListWorld()
        var publisher = world.publisher(.statusList, .statuses(bits: 1, [1]))
        publisher.subject = "https://lists.example/caf\u{E9}"
        let token = try ListToken(bytes: world.token(publisher), kind: .statusList)
        try token.checkSubject("https://lists.example/caf\u{E9}")
        #expect("https://lists.example/cafe\u{301}" == "https://lists.example/caf\u{E9}")
        #expect(listError { () throws(StatusListError) in try token.checkSubject("https://lists.example/cafe\u{301}") }?.step == "sub")
        #expect(listError { () throws(StatusListError) in try token.checkSubject("https://lists.example/caf") }?.step == "sub")
    }

    /// No detail names the URI, an index or an identifier.
    @Test func detailsNameNoReference() throws {
        let world = try ListWorld()
        let token = try ListToken(bytes: world.token(world.publisher(.identifierList, .identifiers([[0x41, 0x42]]))), kind: .identifierList)
        let errors: [StatusListError?] = [
            listError { () throws(StatusListError) in try token.checkSubject("https://elsewhere.example/list/991") },
            listError { () throws(StatusListError) in _ = try StatusBits(bits: 1, bytes: [0]).requireStatus(at: 991) },
        ]
        for error in errors {
            let detail = try #require(error).detail
            #expect(!detail.contains("991") && !detail.contains("elsewhere") && !detail.contains(ListWorld.uri))
        }
    }
}
