import CBOR
import Crypto
import Foundation
import MDoc

extension TestIssuer {
    /// How the issuer lays out what it signs. The defaults verify; the other
    /// values are the forms verifiers must accept or the defects they must catch.
    public struct IssuanceOptions: Sendable {
        /// MSO `validityInfo`.
        public var signed: Date
        public var validFrom: Date
        public var validUntil: Date
        /// The x5chain header (label 33): the DS alone as a bstr (Apple's
        /// sample) or `[DS, IACA]` as an array.
        public var x5chain: X5ChainForm = .documentSigner
        /// COSE_Sign1 with tag 18 or untagged (Apple's sample is untagged).
        public var taggedIssuerAuth = false
        /// The MSO's docType when it should differ from the document's.
        public var msoDocType: String?
        /// Signed as the issuerAuth payload instead of the MSO (malformed-MSO fixtures).
        public var payloadOverride: [UInt8]?
        /// The MSO's `status` member (revocation references), as the issuer writes it; nil leaves it out.
        public var status: CBOR?

        public enum X5ChainForm: Sendable, CaseIterable {
            case documentSigner
            case documentSignerAndIACA
        }

        /// Signed an hour ago, valid for 30 days from then.
        public init(now: Date) {
            signed = now - 3_600
            validFrom = now - 3_600
            validUntil = now + 30 * 86_400
        }
    }

    /// One `IssuerSignedItem`, kept with the exact `#6.24` bytes the MSO digests.
    public struct SignedItem: Sendable {
        public let digestID: UInt64
        public let random: [UInt8]
        public let identifier: String
        public let value: CBOR
        /// `#6.24(bstr .cbor IssuerSignedItem)`.
        public let taggedBytes: [UInt8]

        init(digestID: UInt64, random: [UInt8], identifier: String, value: CBOR) {
            self.digestID = digestID
            self.random = random
            self.identifier = identifier
            self.value = value
            taggedBytes = CBOR.embedded([
                "digestID": .unsigned(digestID), "random": .bytes(random), "elementIdentifier": .text(identifier), "elementValue": value,
            ]).encoded()
        }
    }

    /// What the issuer hands the holder: the signed items and `issuerAuth`.
    public struct IssuedDocument: Sendable {
        public let docType: String
        public var nameSpaces: [(name: String, items: [SignedItem])]
        /// COSE_Sign1 over the MSO.
        public var issuerAuth: CBOR

        /// `IssuerSigned = {"nameSpaces": {ns => [IssuerSignedItemBytes]}, "issuerAuth": COSE_Sign1}`.
        public var issuerSigned: CBOR {
            [
                "nameSpaces": .map(nameSpaces.map { CBOR.MapEntry(.text($0.name), .array($0.items.map { .preEncoded($0.taggedBytes) })) }),
                "issuerAuth": issuerAuth,
            ]
        }

        /// The same document with one element's value changed after signing
        /// (same digestID and salt): the `mso.digest_mismatch` fixture.
        public func replacingValue(namespace: String, identifier: String, with value: CBOR) throws -> IssuedDocument {
            var copy = self
            guard let space = copy.nameSpaces.firstIndex(where: { $0.name == namespace }),
                  let index = copy.nameSpaces[space].items.firstIndex(where: { $0.identifier == identifier })
            else { throw FixtureError("no element \(namespace)/\(identifier)") }
            let item = copy.nameSpaces[space].items[index]
            copy.nameSpaces[space].items[index] = SignedItem(digestID: item.digestID, random: item.random, identifier: identifier, value: value)
            return copy
        }

        /// The same document with one bit of the issuer signature flipped: the
        /// `issuer.signature_invalid` fixture.
        public func flippingIssuerSignature() -> IssuedDocument {
            var copy = self
            copy.issuerAuth = issuerAuth.mappingCOSEPart(3) { part in
                guard case .bytes(var signature) = part, !signature.isEmpty else { return part }
                signature[signature.count / 2] ^= 0x01
                return .bytes(signature)
            }
            return copy
        }
    }
}

extension TestIssuer.Authority {
    /// Signs `credential` for the holder's `deviceKey`: salts each element,
    /// assigns digest IDs in random order (issuers must not leak element order
    /// through them), builds the MSO and signs it with the document signer.
    public func issue(
        _ credential: TestIssuer.Credential, deviceKey: PublicKey, options: TestIssuer.IssuanceOptions, using random: inout some RandomNumberGenerator
    ) throws -> TestIssuer.IssuedDocument {
        var spaces: [(name: String, items: [TestIssuer.SignedItem])] = []
        var digests: [CBOR.MapEntry] = []
        for space in credential.nameSpaces {
            let ids = Array(0..<UInt64(space.elements.count)).shuffled(using: &random)
            let items = zip(space.elements, ids).map { element, id in
                TestIssuer.SignedItem(
                    digestID: id, random: random.bytes(Int.random(in: 16...32, using: &random)), identifier: element.identifier, value: element.value)
            }
            spaces.append((space.name, items))
            let byID = items.sorted { $0.digestID < $1.digestID }.map { CBOR.MapEntry(.unsigned($0.digestID), .bytes(digestAlgorithm.hash($0.taggedBytes))) }
            digests.append(CBOR.MapEntry(.text(space.name), .map(byID)))
        }
        func tdate(_ date: Date) -> CBOR { .tagged(0, .text(RFC3339.string(from: date))) }
        var mso: CBOR = [
            "version": "1.0",
            "digestAlgorithm": .text(digestAlgorithm.rawValue),
            "valueDigests": .map(digests),
            "deviceKeyInfo": ["deviceKey": COSEKey.encode(deviceKey)],
            "docType": .text(options.msoDocType ?? credential.docType),
            "validityInfo": ["signed": tdate(options.signed), "validFrom": tdate(options.validFrom), "validUntil": tdate(options.validUntil)],
        ]
        if let status = options.status { mso = mso.setting("status", to: status) }
        let payload = options.payloadOverride ?? CBOR.embedded(mso).encoded()
        let chain: CBOR = switch options.x5chain {
        case .documentSigner: .bytes(documentSigner.der)
        case .documentSignerAndIACA: [.bytes(documentSigner.der), .bytes(iaca.der)]
        }
        let issuerAuth = try COSESign1.sign(
            payload: payload, key: documentSignerKey, algorithm: signatureAlgorithm,
            unprotected: [CBOR.MapEntry(33, chain)], tagged: options.taggedIssuerAuth)
        return TestIssuer.IssuedDocument(docType: credential.docType, nameSpaces: spaces, issuerAuth: issuerAuth)
    }
}
