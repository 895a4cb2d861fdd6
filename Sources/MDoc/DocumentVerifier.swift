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

    public init(transcript: SessionTranscript, trustStore: TrustStore, time: Date, readerKey: PrivateKey? = nil) {
        self.transcript = transcript
        self.trustStore = trustStore
        self.time = time
        self.readerKey = readerKey
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
            return Result { () throws(MDocError) in try MobileSecurityObject(payload: payload) }
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
        // A certificate the operator pinned as a trust anchor is trusted as it
        // is (test issuers and early wallets pin signers without the Annex B
        // extensions); the profile binds signers that an IACA vouches for.
        if let signer {
            let pinned = context.trustStore.anchors.contains(signer)
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
            if mso.docType == document.docType {
                report.pass(.msoDocType)
            } else {
                report.fail(.msoDocType, .msoDoctypeMismatch, "\(label): MSO docType \(mso.docType) differs from the document's \(document.docType)")
            }
            checkValidity(mso, at: context.time, label: label, into: &report)
            checkDigests(document.issuerSigned, mso: mso, label: label, into: &report)
        }

        // device.authentication
        if let parsedMSO {
            checkDeviceAuthentication(document, deviceKey: parsedMSO.deviceKey, context: context, label: label, into: &report)
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
    /// one the issuer signed under its namespace and digestID.
    private func checkDigests(_ issuerSigned: IssuerSigned, mso: MobileSecurityObject, label: String, into report: inout CheckReport) {
        var mismatches: [String] = []
        for space in issuerSigned.nameSpaces {
            let signed = mso.valueDigests[space.name]
            // Items are read in place (copying each retained its four references).
            space.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    guard let expected = signed?[items[index].digestID] else {
                        mismatches.append("\(space.name)/\(items[index].elementIdentifier) has no signed digest")
                        continue
                    }
                    let actual = mso.digestAlgorithm.hash(items[index].taggedBytes)
                    if !constantTimeEqual(actual, expected) {
                        mismatches.append("\(space.name)/\(items[index].elementIdentifier)")
                    }
                }
            }
        }
        if mismatches.isEmpty {
            report.pass(.msoDigests)
        } else {
            report.fail(.msoDigests, .msoDigestMismatch, "\(label): digest mismatch for " + mismatches.joined(separator: ", "))
        }
    }

    private func checkDeviceAuthentication(
        _ document: Document, deviceKey: PublicKey, context: DocumentVerificationContext, label: String, into report: inout CheckReport
    ) {
        guard let deviceSigned = document.deviceSigned else {
            report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): no deviceSigned, so the response is not bound to this session")
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
            let signedBytes: ArraySlice<UInt8>
            if let attached = signature.payload {
                // ISO 18013-5 detaches the payload; some wallets attach it. It is
                // accepted only when it says exactly what the verifier expects.
                guard attachedPayload(attached, matches: expected) else {
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
            guard let readerKey = context.readerKey else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): deviceMac needs the ephemeral reader key, which the event does not carry")
                return
            }
            guard let key = try? DeviceAuthentication.macKey(readerKey: readerKey, deviceKey: deviceKey, transcript: context.transcript) else {
                report.fail(.deviceAuthentication, .deviceSignatureInvalid, "\(label): the reader key does not agree with the MSO device key's curve")
                return
            }
            let payload: ArraySlice<UInt8> = mac.payload ?? expected[...]
            if mac.payload != nil && !attachedPayload(payload, matches: expected) {
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
    private func attachedPayload(_ attached: ArraySlice<UInt8>, matches expected: [UInt8]) -> Bool {
        if attached.elementsEqual(expected) { return true }
        guard let received = try? CBORDecoder().decode(attached), let receivedInner = try? received.decodeEmbedded("attached"),
              let built = try? CBORDecoder().decode(expected), let builtInner = try? built.decodeEmbedded("expected")
        else { return false }
        return semanticallyEqual(receivedInner, builtInner)
    }

    /// Compares two items by value, looking through tag-24 embeddings.
    private func semanticallyEqual(_ lhs: CBORItem, _ rhs: CBORItem) -> Bool {
        switch (lhs.content, rhs.content) {
        case (.tagged(24, _), .tagged(24, _)):
            guard let left = try? lhs.decodeEmbedded("a"), let right = try? rhs.decodeEmbedded("b") else { return false }
            return semanticallyEqual(left, right)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { semanticallyEqual($0, $1) }
        default:
            return lhs.value == rhs.value
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
