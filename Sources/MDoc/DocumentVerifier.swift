import CBOR
import Crypto
import Foundation

/// What a verified (or rejected) document discloses about itself: facts for
/// outcomes and analytics, and the disclosed elements with their values for
/// whoever is allowed to keep them.
public struct DocumentSummary: Sendable {
    public var docType: String
    public var issuerSubject: String?
    public var issuerCountry: String?
    public var signed: Date?
    public var validFrom: Date?
    public var validUntil: Date?
    public var elements: [DisclosedElement]
}

public struct DisclosedElement: Sendable {
    public let namespace: String
    public let identifier: String
    /// The element value as received; nil once released
    /// (`DocumentSummary.releasingValues()`). Personal data: never log it.
    public let value: CBORItem?
}

extension DocumentSummary {
    /// The summary with its element names and none of their values.
    public func releasingValues() -> DocumentSummary {
        var summary = self
        summary.elements = elements.map { DisclosedElement(namespace: $0.namespace, identifier: $0.identifier, value: nil) }
        return summary
    }
}

/// Everything a document is checked against.
public struct DocumentVerificationContext: Sendable {
    public var transcript: SessionTranscript
    public var trustStore: TrustStore
    public var time: Date
    /// The reader's ephemeral private key, needed only for a `deviceMac`.
    public var readerKey: PrivateKey?
    /// For the document's nested decodes (MSO, attached payloads): the event's budget.
    public var limits: CBORDecoder.Limits

    public init(transcript: SessionTranscript, trustStore: TrustStore, time: Date, readerKey: PrivateKey? = nil, limits: CBORDecoder.Limits = .default) {
        self.transcript = transcript
        self.trustStore = trustStore
        self.time = time
        self.readerKey = readerKey
        self.limits = limits
    }
}

/// ISO/IEC 18013-5 §9.3.1 for one document, as named checks that each pass or
/// fail on their own: issuer chain and certificate, issuer signature, MSO
/// structure, docType, validity and digests, and device authentication.
/// A failing check does not stop the others where their inputs exist.
public struct DocumentVerifier: Sendable {
    public init() {}

    public func verify(_ document: Document, index: Int, context: DocumentVerificationContext, into report: inout CheckReport) -> DocumentSummary {
        let label = "document \(index)"
        var summary = DocumentSummary(docType: document.docType, elements: [])
        let issuerAuth = document.issuerSigned.issuerAuth

        // The MSO is parsed first because several checks need its dates and
        // keys; its own check is reported in order below.
        let mso: Result<MobileSecurityObject, MDocError> = {
            guard let payload = issuerAuth.payload else { return .failure(.malformed("issuerAuth has no payload")) }
            return Result { () throws(MDocError) in try MobileSecurityObject(payload: payload, limits: context.limits) }
        }()
        let parsedMSO = try? mso.get()

        // issuer.chain
        var signer: Certificate?
        do {
            let chain = try issuerAuth.x5chain(context: "\(label) issuerAuth")
            if let leaf = chain.first {
                signer = leaf
                let facts = leaf.facts
                summary.issuerSubject = facts.subjectDescription
                summary.issuerCountry = facts.subjectCountry
                switch context.trustStore.validate(leaf: leaf, intermediates: Array(chain.dropFirst()), at: context.time) {
                case .success where context.trustStore.isAnchorOnly(leaf):
                    // A path of one: the anchor signed the MSO itself.
                    report.fail(.issuerChain, .issuerUntrusted,
                                "\(label): the document signer is a trust anchor itself; ISO 18013-5 requires a document signer issued by the IACA (pin a signer with pinnedDocumentSigners)")
                case .success:
                    report.pass(.issuerChain)
                case .failure(.untrusted(let detail)):
                    report.fail(.issuerChain, .issuerUntrusted, "\(label): \(detail)")
                case .failure(.certificateInvalid(let detail)):
                    report.fail(.issuerChain, .issuerCertificateInvalid, "\(label): \(detail)")
                }
            } else {
                report.fail(.issuerChain, .issuerUntrusted, "\(label): issuerAuth carries no x5chain certificate")
            }
        } catch {
            report.fail(.issuerChain, .issuerCertificateInvalid, error.detail)
        }

        // issuer.certificate: the document-signer profile and the MSO signing date.
        // A signer the operator pinned on purpose (pinnedDocumentSigners) is
        // trusted as it is: public vectors and early wallets have signers
        // without the Annex B extensions. Every other signer, an anchor
        // presented as one included, must have the profile.
        if let signer {
            let pinned = context.trustStore.isPinnedSigner(signer)
            var problems = pinned ? [] : signer.facts.documentSignerViolations
            if let parsedMSO, parsedMSO.signed < signer.notBefore || parsedMSO.signed > signer.notAfter {
                problems.append("MSO signed \(RFC3339.string(from: parsedMSO.signed)) outside the document signer's validity")
            }
            if problems.isEmpty {
                report.pass(.issuerCertificate)
            } else {
                report.fail(.issuerCertificate, .issuerCertificateInvalid, "\(label): " + problems.joined(separator: ", "))
            }
        } else {
            report.skip(.issuerCertificate)
        }

        // issuer.signature
        checkIssuerSignature(issuerAuth, signer: signer, label: label, into: &report)

        // mso.*
        switch mso {
        case .failure(let error):
            // Everything wrong inside the signed MSO, an unsupported digest
            // algorithm or device key included, is the issuer's malformed MSO.
            report.fail(.msoStructure, .msoMalformed, "\(label): \(error.detail)")
        case .success(let mso):
            report.pass(.msoStructure)
            summary.signed = mso.signed
            summary.validFrom = mso.validFrom
            summary.validUntil = mso.validUntil
            // By bytes: the document must claim exactly the docType the issuer signed.
            if mso.docType.hasSameUTF8(as: document.docType) {
                report.pass(.msoDocType)
            } else {
                report.fail(.msoDocType, .msoDoctypeMismatch, "\(label): MSO docType \(mso.docType) differs from the document's \(document.docType)")
            }
            checkValidity(mso, at: context.time, label: label, into: &report)
            checkDigests(document.issuerSigned, mso: mso, label: label, into: &report)
        }

        // device.authentication
        if let parsedMSO {
            checkDeviceAuthentication(
                document, deviceKey: parsedMSO.deviceKey, deviceKeyAlgorithm: parsedMSO.deviceKeyAlgorithm, context: context, label: label,
                into: &report)
        } else {
            report.skip(.deviceAuthentication)
        }

        summary.elements = document.issuerSigned.nameSpaces.flatMap { space in
            space.items.map { DisclosedElement(namespace: space.name, identifier: $0.elementIdentifier, value: $0.elementValue) }
        }
        return summary
    }

    private func checkIssuerSignature(_ issuerAuth: COSESign1, signer: Certificate?, label: String, into report: inout CheckReport) {
        let algorithm: COSESignatureAlgorithm
        do {
            algorithm = try issuerAuth.algorithm(context: "\(label) issuerAuth")
        } catch {
            report.fail(.issuerSignature, error.isUnsupported ? .payloadUnsupported : .issuerSignatureInvalid, error.detail)
            return
        }
        // No usable document signer certificate (issuer.chain failed): the input is
        // missing, so the check is skipped, as reason-codes.md says of such checks.
        guard let signer else {
            report.skip(.issuerSignature)
            return
        }
        guard let key = try? signer.facts.publicKey.get() else {
            report.fail(.issuerSignature, .payloadUnsupported, "\(label): document signer key type is not supported")
            return
        }
        guard key.type == algorithm.keyType else {
            report.fail(.issuerSignature, .issuerSignatureInvalid, "\(label): algorithm \(algorithm) does not match the document signer's key")
            return
        }
        if issuerAuth.isValidSignature(algorithm: algorithm, key: key) {
            report.pass(.issuerSignature)
        } else {
            report.fail(.issuerSignature, .issuerSignatureInvalid, "\(label): issuerAuth signature does not verify with the document signer key")
        }
    }

    private func checkValidity(_ mso: MobileSecurityObject, at time: Date, label: String, into report: inout CheckReport) {
        if time < mso.validFrom {
            report.fail(.msoValidity, .msoNotYetValid, "\(label): MSO validFrom \(RFC3339.string(from: mso.validFrom)) is after verification time \(RFC3339.string(from: time))")
        } else if time > mso.validUntil {
            report.fail(.msoValidity, .msoExpired, "\(label): MSO validUntil \(RFC3339.string(from: mso.validUntil)) is before verification time \(RFC3339.string(from: time))")
        } else {
            report.pass(.msoValidity)
        }
    }

    /// Each disclosed item's digest, over its received tag-24 bytes, must be the
    /// one the issuer signed under its namespace and digestID (namespaces by
    /// their bytes). A digest vouches for one item: a digestID or an element
    /// identifier twice in one namespace is refused, or one signed item would
    /// be disclosed twice, or one element with two values.
    private func checkDigests(_ issuerSigned: IssuerSigned, mso: MobileSecurityObject, label: String, into report: inout CheckReport) {
        var mismatches = FindingSummary()
        var repeated = FindingSummary()
        for space in issuerSigned.nameSpaces {
            let signed = mso.valueDigests[Identifier(space.name)]
            var digestIDs = Set<UInt64>()
            var identifiers = Set<Identifier>()
            digestIDs.reserveCapacity(space.items.count)
            identifiers.reserveCapacity(space.items.count)
            // Items are read in place (copying each retained its four references).
            space.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    let item = items[index]
                    if !digestIDs.insert(item.digestID).inserted {
                        repeated.add("digestID \(item.digestID) in \(space.name)")
                    }
                    if !identifiers.insert(Identifier(item.elementIdentifier)).inserted {
                        repeated.add("\(space.name)/\(item.elementIdentifier)")
                    }
                    guard let expected = signed?[item.digestID] else {
                        mismatches.add("\(space.name)/\(item.elementIdentifier) (no signed digest)")
                        continue
                    }
                    let actual = mso.digestAlgorithm.hash(item.taggedBytes)
                    if !constantTimeEqual(actual, expected) {
                        mismatches.add("\(space.name)/\(item.elementIdentifier)")
                    }
                }
            }
        }
        if mismatches.isEmpty && repeated.isEmpty {
            report.pass(.msoDigests)
            return
        }
        if !mismatches.isEmpty {
            report.fail(.msoDigests, .msoDigestMismatch, "\(label): digest mismatch for \(mismatches.count) item(s): \(mismatches.description)")
        }
        if !repeated.isEmpty {
            report.fail(.msoDigests, .msoDigestMismatch, "\(label): disclosed twice in one namespace: \(repeated.description)")
        }
    }

    private func checkDeviceAuthentication(
        _ document: Document, deviceKey: PublicKey, deviceKeyAlgorithm: Int64?, context: DocumentVerificationContext, label: String,
        into report: inout CheckReport
    ) {
        guard let deviceSigned = document.deviceSigned else {
            report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): no deviceSigned, so the response is not bound to this session")
            return
        }
        guard !deviceSigned.hasBothAuthentications else {
            report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): deviceAuth holds both deviceSignature and deviceMac; exactly one is allowed")
            return
        }
        let expected = DeviceAuthentication.bytes(transcript: context.transcript, docType: document.docType, nameSpacesBytes: deviceSigned.nameSpacesBytes)
        switch deviceSigned.authentication {
        case .signature(let signature):
            let algorithm: COSESignatureAlgorithm
            do {
                algorithm = try signature.algorithm(context: "\(label) deviceSignature")
            } catch {
                report.fail(.deviceAuthentication, error.isUnsupported ? .payloadUnsupported : .deviceSignatureInvalid, error.detail)
                return
            }
            guard deviceKey.type == algorithm.keyType else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): algorithm \(algorithm) does not match the MSO device key")
                return
            }
            // The same algorithm under its fully-specified id (RFC 9864: ESP256 for ES256 on P-256, Ed25519 for EdDSA) is no contradiction.
            if let declared = deviceKeyAlgorithm,
               COSESignatureAlgorithm(rawValue: declared).map({ $0.keyType != algorithm.keyType || $0.hash != algorithm.hash }) ?? true {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid,
                            "\(label): the MSO device key is for algorithm \(declared), the device signature uses \(algorithm.rawValue)")
                return
            }
            let signedBytes: ArraySlice<UInt8>
            if let attached = signature.payload {
                // ISO 18013-5 detaches the payload; some wallets attach it. It is
                // accepted only when it says exactly what the verifier expects.
                guard attachedPayload(attached, matches: expected, limits: context.limits) else {
                    report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): attached DeviceAuthentication differs from the session's")
                    return
                }
                signedBytes = attached
            } else {
                signedBytes = expected[...]
            }
            if signature.isValidSignature(algorithm: algorithm, key: deviceKey, payload: signedBytes) {
                report.pass(.deviceAuthentication)
            } else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): device signature does not verify over DeviceAuthentication with this session transcript")
            }
        case .mac(let mac):
            do {
                try mac.checkAlgorithm(context: "\(label) deviceMac")
            } catch {
                report.fail(.deviceAuthentication, error.isUnsupported ? .payloadUnsupported : .deviceSignatureInvalid, error.detail)
                return
            }
            // The device key serves the MAC through key agreement (ECDH-ES, COSE -25 to -31).
            if let declared = deviceKeyAlgorithm, !(-31 ... -25).contains(declared) {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid,
                            "\(label): the MSO device key is for algorithm \(declared), not the key agreement a deviceMac needs")
                return
            }
            guard let readerKey = context.readerKey else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): deviceMac needs the ephemeral reader key, which the event does not carry")
                return
            }
            guard let key = try? DeviceAuthentication.macKey(readerKey: readerKey, deviceKey: deviceKey, transcript: context.transcript) else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): the reader key does not agree with the MSO device key's curve")
                return
            }
            let payload: ArraySlice<UInt8> = mac.payload ?? expected[...]
            if mac.payload != nil && !attachedPayload(payload, matches: expected, limits: context.limits) {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): attached DeviceAuthentication differs from the session's")
            } else if mac.isValid(key: key, payload: payload) {
                report.pass(.deviceAuthentication)
            } else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): device MAC does not verify over DeviceAuthentication with this session transcript")
            }
        }
    }

    /// Byte-equal, or the same data items encoded differently (wallets that
    /// attach the payload do not always use preferred serialization).
    private func attachedPayload(_ attached: ArraySlice<UInt8>, matches expected: [UInt8], limits: CBORDecoder.Limits) -> Bool {
        if attached.elementsEqual(expected) { return true }
        let decoder = CBORDecoder(limits: limits)
        guard let received = try? decoder.decode(attached), let receivedInner = try? received.decodeEmbedded("attached", limits: limits),
              let built = try? decoder.decode(expected[...]), let builtInner = try? built.decodeEmbedded("expected", limits: limits)
        else { return false }
        return sameItems(receivedInner, builtInner, limits: limits)
    }

    /// The same data items, looking through tag-24 embeddings. Text is the
    /// same when its bytes are: a lookalike docType is another docType.
    private func sameItems(_ lhs: CBORItem, _ rhs: CBORItem, limits: CBORDecoder.Limits) -> Bool {
        switch (lhs.content, rhs.content) {
        case (.tagged(24, _), .tagged(24, _)):
            guard let left = try? lhs.decodeEmbedded("a", limits: limits), let right = try? rhs.decodeEmbedded("b", limits: limits) else { return false }
            return sameItems(left, right, limits: limits)
        case (.tagged(let leftTag, let left), .tagged(let rightTag, let right)):
            return leftTag == rightTag && sameItems(left, right, limits: limits)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { sameItems($0, $1, limits: limits) }
        case (.map(let left), .map(let right)):
            return left.count == right.count
                && zip(left, right).allSatisfy { sameItems($0.key, $1.key, limits: limits) && sameItems($0.value, $1.value, limits: limits) }
        case (.text(let left), .text(let right)):
            return left.hasSameUTF8(as: right)
        case (.bytes(let left), .bytes(let right)):
            return left.elementsEqual(right)
        case (.unsigned(let left), .unsigned(let right)), (.negative(let left), .negative(let right)):
            return left == right
        case (.simple(let left), .simple(let right)):
            return left == right
        case (.bool(let left), .bool(let right)):
            return left == right
        case (.null, .null), (.undefined, .undefined):
            return true
        case (.float(let left), .float(let right)):
            return left.bitPattern == right.bitPattern
        default:
            return false
        }
    }
}

extension MDocError {
    public var isUnsupported: Bool {
        if case .unsupported = self { return true }
        return false
    }
}

func constantTimeEqual(_ lhs: [UInt8], _ rhs: ArraySlice<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
    return difference == 0
}
