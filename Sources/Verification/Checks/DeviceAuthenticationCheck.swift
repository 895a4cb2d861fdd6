import CBOR
import Crypto
import MDoc

/// `device.authentication`: the response is bound to this session. The
/// document's deviceSigned carries exactly one of a device signature (COSE_Sign1
/// with the MSO's device key) or a device MAC (COSE_Mac0 with a key agreed
/// between the reader key and the device key), over DeviceAuthentication
/// built from this session transcript. A MAC counts only when a registered
/// reader signed the submission (`ReaderAttestation`): the submitter supplies
/// the reader key the MAC is agreed with, so without that signature a MAC
/// proves nothing about the holder's device (`device.mac_unbound`).
enum DeviceAuthenticationCheck: DocumentCheck {
    static let name = CheckName.deviceAuthentication
    static let reasons: [ReasonCode] = [.deviceSignatureInvalid, .payloadUnsupported, .deviceMacUnbound]

    static func run(_ underVerification: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let mso = underVerification.parsedMSO else {
            report.skip(name)
            return
        }
        let document = underVerification.document
        let context = underVerification.context
        let label = underVerification.label
        let deviceKey = mso.deviceKey
        let deviceKeyAlgorithm = mso.deviceKeyAlgorithm
        guard let deviceSigned = document.deviceSigned else {
            report.fail(name, .deviceSignatureInvalid, "\(label): no deviceSigned, so the response is not bound to this session")
            return
        }
        guard !deviceSigned.hasBothAuthentications else {
            report.fail(name, .deviceSignatureInvalid, "\(label): deviceAuth holds both deviceSignature and deviceMac; exactly one is allowed")
            return
        }
        let expected = DeviceAuthentication.bytes(transcript: context.transcript, docType: document.docType, nameSpacesBytes: deviceSigned.nameSpacesBytes)
        switch deviceSigned.authentication {
        case .signature(let signature):
            guard let algorithm = report.algorithm(of: signature, context: "\(label) deviceSignature", failing: name, invalid: .deviceSignatureInvalid) else { return }
            guard deviceKey.type == algorithm.keyType else {
                report.fail(name, .deviceSignatureInvalid, "\(label): algorithm \(algorithm) does not match the MSO device key")
                return
            }
            // The same algorithm under its fully-specified id (RFC 9864: ESP256 for ES256 on P-256, Ed25519 for EdDSA) is no contradiction.
            if let declared = deviceKeyAlgorithm,
               COSESignatureAlgorithm(rawValue: declared).map({ $0.keyType != algorithm.keyType || $0.hash != algorithm.hash }) ?? true {
                report.fail(name, .deviceSignatureInvalid,
                            "\(label): the MSO device key is for algorithm \(declared), the device signature uses \(algorithm.rawValue)")
                return
            }
            let signedBytes: ArraySlice<UInt8>
            if let attached = signature.payload {
                // ISO 18013-5 detaches the payload; some wallets attach it. It is
                // accepted only when it says exactly what the verifier expects.
                guard attachedPayload(attached, matches: expected, limits: context.limits) else {
                    report.fail(name, .deviceSignatureInvalid, "\(label): attached DeviceAuthentication differs from the session's")
                    return
                }
                signedBytes = attached
            } else {
                signedBytes = expected[...]
            }
            if signature.isValidSignature(algorithm: algorithm, key: deviceKey, payload: signedBytes) {
                report.pass(name)
                underVerification.summary.deviceAuthentication = .signature
            } else {
                report.fail(name, .deviceSignatureInvalid, "\(label): device signature does not verify over DeviceAuthentication with this session transcript")
            }
        case .mac(let mac):
            do {
                try mac.checkAlgorithm(context: "\(label) deviceMac")
            } catch {
                report.fail(name, error.isUnsupported ? .payloadUnsupported : .deviceSignatureInvalid, error.detail)
                return
            }
            // The device key serves the MAC through key agreement (ECDH-ES, COSE -25 to -31).
            if let declared = deviceKeyAlgorithm, !(-31 ... -25).contains(declared) {
                report.fail(name, .deviceSignatureInvalid,
                            "\(label): the MSO device key is for algorithm \(declared), not the key agreement a deviceMac needs")
                return
            }
            guard let reader = context.authenticatedReader else {
                report.fail(name, .deviceMacUnbound,
                            "\(label): authenticated by deviceMac, which proves the holder's device only to the holder of the reader key; "
                                + "the submitter supplied that key and no registered reader signed the submission (data.readerAuthentication)")
                return
            }
            guard let readerKey = context.readerKey else {
                report.fail(name, .deviceSignatureInvalid, "\(label): deviceMac needs the ephemeral reader key, which the event does not carry")
                return
            }
            guard let key = try? DeviceAuthentication.macKey(readerKey: readerKey, deviceKey: deviceKey, transcript: context.transcript) else {
                report.fail(name, .deviceSignatureInvalid, "\(label): the reader key does not agree with the MSO device key's curve")
                return
            }
            let payload: ArraySlice<UInt8> = mac.payload ?? expected[...]
            if mac.payload != nil && !attachedPayload(payload, matches: expected, limits: context.limits) {
                report.fail(name, .deviceSignatureInvalid, "\(label): attached DeviceAuthentication differs from the session's")
            } else if mac.isValid(key: key, payload: payload) {
                report.pass(name)
                underVerification.summary.deviceAuthentication = .mac(reader: reader)
            } else {
                report.fail(name, .deviceSignatureInvalid, "\(label): device MAC does not verify over DeviceAuthentication with this session transcript")
            }
        }
    }

    /// Byte-equal, or the same data items encoded differently (wallets that
    /// attach the payload do not always use preferred serialization).
    private static func attachedPayload(_ attached: ArraySlice<UInt8>, matches expected: [UInt8], limits: CBORDecoder.Limits) -> Bool {
        if attached.elementsEqual(expected) { return true }
        let decoder = CBORDecoder(limits: limits)
        guard let received = try? decoder.decode(attached), let receivedInner = try? received.decodeEmbedded("attached", limits: limits),
              let built = try? decoder.decode(expected[...]), let builtInner = try? built.decodeEmbedded("expected", limits: limits)
        else { return false }
        return sameItems(receivedInner, builtInner, limits: limits)
    }

    /// The same data items, looking through tag-24 embeddings. Text is the
    /// same when its bytes are: a lookalike docType is another docType.
    private static func sameItems(_ lhs: CBORItem, _ rhs: CBORItem, limits: CBORDecoder.Limits) -> Bool {
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
