import Crypto
import Foundation
import MDoc
import StatusList
import TestIssuer
import TestSupport
import Testing

/// Every token of `shared/vectors/status-list` yields what its README and
/// `.expected.json` say.
@Suite(.enabled(if: ListVectors.available, "\(ListVectors.missing)"))
struct ListTokenVectorTests {
    /// Draft -20 §5.2: the Status List Token in CWT form, signed with the draft's example key.
    @Test func draftStatusListToken() throws {
        let expected = try ListVectors.object("draft20/status_list_cwt.expected.json")
        let claims = try #require(expected["claims"] as? [String: Any])
        let token = try ListToken(bytes: try ListVectors.hex("draft20/status_list_cwt.hex"), kind: .statusList)

        #expect(token.kind == .statusList)
        #expect(token.algorithm == .es256)
        #expect(token.signerChain.isEmpty)
        try token.verifySignature(with: PublicKey(pem: try ListVectors.text("draft20/example_key_public.pem")))
        #expect(token.subject == claims["2 (sub)"] as? String)
        let issuedAt = try ListVectors.date(claims["6 (iat)"])
        let expiresAt = try ListVectors.date(claims["4 (exp)"])
        #expect(token.issuedAt == issuedAt)
        #expect(token.expiresAt == expiresAt)
        #expect(token.timeToLive == (claims["65534 (ttl)"] as? Int).map(TimeInterval.init))

        let list = try #require(token.statusList)
        #expect(list.count == expected["entries_capacity"] as? Int)
        for entry in try #require(expected["statuses"] as? [[String: Any]]) {
            let index = try #require(entry["idx"] as? Int)
            #expect(list.status(at: UInt64(index)).map(Int.init) == entry["status"] as? Int, "index \(index)")
        }
        #expect(list.status(at: 16) == nil)
        #expect(listError { () throws(StatusListError) in _ = try list.requireStatus(at: 16) }?.step == "index")

        // Valid in [iat, exp).
        try token.checkValidity(at: issuedAt, allowedClockSkew: 0)
        try token.checkValidity(at: expiresAt - 1, allowedClockSkew: 0)
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: expiresAt, allowedClockSkew: 0) }?.step == "exp")
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: issuedAt - 1, allowedClockSkew: 0) }?.step == "iat")
        try token.checkValidity(at: issuedAt - 1, allowedClockSkew: 1)

        try token.checkSubject(try #require(claims["2 (sub)"] as? String))
        #expect(listError { () throws(StatusListError) in try token.checkSubject("https://example.com/statuslists/2") }?.step == "sub")
    }

    /// The draft's token names its key by kid only, with no x5chain: no
    /// signer can be established for an mdoc, whoever's authority is asked.
    @Test func draftTokenHasNoSignerForAnMdoc() throws {
        let token = try ListToken(bytes: try ListVectors.hex("draft20/status_list_cwt.hex"), kind: .statusList)
        let authority = try TestIssuer.Authority(now: token.issuedAt)
        let result = ListSignerRule.authorize(token: token, referenceCertificate: nil, documentSigner: authority.documentSigner,
                                              issuingAnchor: authority.iaca, at: token.issuedAt)
        #expect(result.failure?.step == "signer")
    }

    /// Draft -14's untagged COSE_Sign1, whose signature is valid: draft -15
    /// and later require the tag, so it is refused.
    @Test func untaggedDraft14TokenIsRefused() throws {
        let bytes = try ListVectors.hex("draft14-untagged/status_list_cwt_untagged.hex")
        #expect(bytes.first == 0x84)
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .statusList) }?.step == "token")
    }

    /// The JWT form of the same list, served where a CWT is expected.
    @Test func jwtIsNotACWT() throws {
        let jwt = try ListVectors.bytes("draft20/status_list_jwt.txt")
        #expect(jwt.starts(with: Array("eyJ".utf8)))
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: jwt, kind: .statusList) }?.step == "token")
    }

    /// A Referenced Token (a credential) is not a list: it has no list `typ`.
    @Test func referencedTokenIsNotAList() throws {
        let bytes = try ListVectors.hex("draft20/referenced_token_cwt.hex")
        for kind in ListKind.allCases {
            #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: kind) }?.step == "media_type")
        }
    }

    /// Draft -15's mdoc names index 412 of a list whose published token has
    /// 16 entries: no statement. The appendix's 2^20-entry list has 412 valid.
    @Test func draft15MdocIndex() throws {
        let mso = try #require(try ListVectors.object("draft15-mdoc/expected.json")["mso"] as? [String: Any])
        let reference = try #require((mso["status"] as? [String: Any])?["status_list"] as? [String: Any])
        let index = UInt64(try #require(reference["idx"] as? Int))
        let token = try ListToken(bytes: try ListVectors.hex("draft20/status_list_cwt.hex"), kind: .statusList)
        try token.checkSubject(try #require(reference["uri"] as? String))
        #expect(listError { () throws(StatusListError) in _ = try token.statusList!.requireStatus(at: index) }?.step == "index")
        #expect(try StatusBits(cbor: try ListVectors.hex("draft20/lists/appendix-bits1.cbor.hex")).requireStatus(at: index) == 0)
    }

    // MARK: - The derived identifier lists

    struct Derived {
        let expected: [String: Any]
        let iaca: Certificate
        let documentSigner: Certificate
        let uri: String
        let verifyAt: Date
        let issuedAt: Date
        let expiresAt: Date

        init() throws {
            expected = try ListVectors.object("derived-identifier-list/expected.json")
            iaca = try ListVectors.certificate("derived-identifier-list/iaca.pem")
            documentSigner = try ListVectors.certificate("derived-identifier-list/ds.pem")
            uri = try #require(expected["uri"] as? String)
            verifyAt = try ListVectors.date(expected["verify_at"])
            issuedAt = try ListVectors.date(expected["iat"])
            expiresAt = try ListVectors.date(expected["exp"])
        }

        func token(_ file: String) throws -> ListToken {
            try ListToken(bytes: try ListVectors.hex("derived-identifier-list/\(file)"), kind: .identifierList)
        }

        func hexField(_ name: String) throws -> [UInt8] {
            hex(try #require(expected[name] as? String))
        }
    }

    @Test func derivedIdentifierList() throws {
        let derived = try Derived()
        let token = try derived.token("valid_es256.hex")
        #expect(token.kind == .identifierList)
        #expect(token.algorithm == .es256)
        #expect(token.signerChain == [derived.documentSigner])
        #expect(token.issuedAt == derived.issuedAt)
        #expect(token.expiresAt == derived.expiresAt)
        #expect(token.timeToLive == (derived.expected["ttl"] as? Int).map(TimeInterval.init))

        try token.verifySignature(with: derived.documentSigner.publicKey())
        let signer = ListSignerRule.authorize(token: token, referenceCertificate: nil, documentSigner: derived.documentSigner,
                                              issuingAnchor: derived.iaca, at: derived.verifyAt)
        #expect(try signer.get() == derived.documentSigner)
        try token.verifySignature(by: try signer.get())
        try token.checkValidity(at: derived.verifyAt, allowedClockSkew: 0)
        try token.checkSubject(derived.uri)

        let identifiers = try #require(token.identifiers)
        let listed = try #require(derived.expected["listed_identifiers"] as? [String])
        #expect(identifiers.count == listed.count)
        for id in listed { #expect(identifiers.contains(hex(id)), "listed \(id)") }
        for absent in [try derived.hexField("absent_identifier_example"), [1, 2, 3, 4], [9, 9]] {
            #expect(!identifiers.contains(absent))
        }
        // Exact equality: a prefix or an extension of a listed identifier is another identifier.
        let first = hex(listed[0])
        #expect(!identifiers.contains(first.dropLast()))
        #expect(!identifiers.contains(first + [0]))
    }

    /// exp + 60 s is expired; iat − 60 s is not yet issued (the signer's
    /// certificate is outside its validity at both, too).
    @Test func derivedIdentifierListTimes() throws {
        let derived = try Derived()
        let token = try derived.token("valid_es256.hex")
        for check in try #require(derived.expected["time_checks_on_valid_es256"] as? [[String: Any]]) {
            let time = try ListVectors.date(check["verify_at"])
            let result = try #require(check["result"] as? String)
            let error = listError { () throws(StatusListError) in try token.checkValidity(at: time, allowedClockSkew: 0) }
            if result == "valid" {
                #expect(error == nil)
            } else {
                #expect(error?.step == (time > derived.expiresAt ? "exp" : "iat"), "\(result)")
                let signer = ListSignerRule.authorize(token: token, referenceCertificate: nil, documentSigner: derived.documentSigner,
                                                      issuingAnchor: derived.iaca, at: time)
                #expect(signer.failure?.step == "signer")
            }
        }
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: derived.expiresAt + 60, allowedClockSkew: 0) }?.step == "exp")
        #expect(listError { () throws(StatusListError) in try token.checkValidity(at: derived.issuedAt - 60, allowedClockSkew: 0) }?.step == "iat")
    }

    /// The list's signer must chain to the IACA that issued the document's
    /// signer: another IACA, trusted or not, is not asked.
    @Test func derivedIdentifierListUnderAnotherIACA() throws {
        let derived = try Derived()
        let token = try derived.token("valid_es256.hex")
        let other = try TestIssuer.Authority(now: derived.verifyAt)
        let result = ListSignerRule.authorize(token: token, referenceCertificate: nil, documentSigner: other.documentSigner,
                                              issuingAnchor: other.iaca, at: derived.verifyAt)
        #expect(result.failure?.step == "signer")
    }

    /// ESP256 (-9) is ES256 fully specified (RFC 9864): accepted as ES256 is.
    @Test func derivedIdentifierListESP256() throws {
        let derived = try Derived()
        let token = try derived.token("valid_esp256_multipaz_alg.hex")
        #expect(token.algorithm == .esp256)
        try token.verifySignature(with: derived.documentSigner.publicKey())
        #expect(try #require(token.identifiers).count == 2)
    }

    @Test(arguments: [
        ("neg_typ_missing.hex", "media_type"),
        ("neg_typ_statuslist.hex", "media_type"),
        ("neg_exp_missing.hex", "exp"),
        ("neg_has_status_list_claim.hex", "claims"),
    ])
    func derivedNegativeParses(file: String, step: String) throws {
        let bytes = try ListVectors.hex("derived-identifier-list/\(file)")
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: bytes, kind: .identifierList) }?.step == step)
    }

    @Test func derivedSubjectMismatch() throws {
        let derived = try Derived()
        let token = try derived.token("neg_sub_mismatch.hex")
        try token.verifySignature(with: derived.documentSigner.publicKey())
        #expect(listError { () throws(StatusListError) in try token.checkSubject(derived.uri) }?.step == "sub")
    }

    @Test func derivedBadSignature() throws {
        let derived = try Derived()
        let token = try derived.token("neg_bad_signature.hex")
        let key = try derived.documentSigner.publicKey()
        #expect(listError { () throws(StatusListError) in try token.verifySignature(with: key) }?.step == "signature")
        // The intact token verifies with the same key: the flipped byte is what fails.
        try derived.token("valid_es256.hex").verifySignature(with: derived.documentSigner.publicKey())
    }

    /// The identifier-list vector fetched where a status list is expected, and the reverse.
    @Test func kindsAreNotInterchangeable() throws {
        let identifierList = try ListVectors.hex("derived-identifier-list/valid_es256.hex")
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: identifierList, kind: .statusList) }?.step == "media_type")
        let statusList = try ListVectors.hex("draft20/status_list_cwt.hex")
        #expect(listError { () throws(StatusListError) in _ = try ListToken(bytes: statusList, kind: .identifierList) }?.step == "media_type")
    }
}
