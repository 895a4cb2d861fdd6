// libFuzzer target: the fast "common form" readers against the general
// readers they stand in for (issue 22 §3). Two parsers of one structure that
// can disagree are an attack surface in a verifier, so any difference traps:
// the fast reader accepting what the general one refuses, or both accepting
// with different content. The fast reader answering nil is no disagreement:
// it has no opinion and defers to the general reader.
//
// The first input byte chooses what the rest is:
//   0 — a DeviceResponse: `DeviceResponse.commonForm` against `CBORDecoder` +
//       `DeviceResponse(_:)`; then each document's MSO and each item of the
//       general reading as in modes 1 and 2;
//   1 — an issuerAuth payload: `MobileSecurityObject.commonForm` against `init(general:)`;
//   2 — an IssuerSignedItem, the content of its `#6.24(bstr)`: the reader
//       (common form first) against `init(generalTaggedBytes:content:)`;
//   3 — an event's JSON: `EventParser.commonForm` against `JSONParser` +
//       `EventParser.parse(attributes:data:)`;
//   4 — the Apple plaintext `{"identity": DeviceResponse}`:
//       `AppleEnvelope.deviceResponse(inPlaintext:)` (in place when it can)
//       against `identity(inPlaintext:)` + `DeviceResponse(_:)`.
// A trap names the structure and the field, and shows at most a short hex
// prefix of the input (fuzz inputs only; never a real event).
import CBOR
import Crypto
import Foundation
import JSON
import MDoc
import Verification

enum Target: FuzzTarget {
    static let name: StaticString = "parsers"

    static func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        switch mode % 5 {
        case 0: Differential.deviceResponse(rest)
        case 1: Differential.mso(rest[...], rest)
        case 2: Differential.issuerSignedItem(content: rest[...], rest)
        case 3: Differential.event(rest)
        default: Differential.applePlaintext(rest)
        }
    }
}

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    StructureMutator.mutate(data, size, maxSize, seed, modeByte: true) { $0 % 5 == 3 ? .json : .cbor }
}

enum Differential {
    static func deviceResponse(_ bytes: [UInt8]) {
        let fast = DeviceResponse.commonForm(bytes[...])
        let reading: Result<DeviceResponse, MDocError>
        do throws(MDocError) {
            let item: CBORItem
            do { item = try CBORDecoder().decode(bytes) } catch { throw .malformed(describe(error)) }
            reading = .success(try DeviceResponse(item))
        } catch {
            reading = .failure(error)
        }
        if let fast {
            let general: DeviceResponse
            switch reading {
            case .success(let response): general = response
            case .failure(let error): disagree("DeviceResponse", "accept/reject (general: \(error.detail))", bytes)
            }
            var check = Check(structure: "DeviceResponse", input: bytes)
            check.compare(fast, general)
        }
        // The parts the general reader found, through their own pairs of readers.
        for document in (try? reading.get())?.documents ?? [] {
            if let payload = document.issuerSigned.issuerAuth.payload { mso(payload, bytes) }
            for space in document.issuerSigned.nameSpaces {
                for item in space.items {
                    guard let tagged = try? CBORDecoder().decode(item.taggedBytes), let content = tagged.tagged?.item.bytes else {
                        disagree("IssuerSignedItem", "taggedBytes are not #6.24(bstr)", bytes)
                    }
                    issuerSignedItem(content: content, bytes)
                }
            }
        }
    }

    static func mso(_ payload: ArraySlice<UInt8>, _ input: [UInt8]) {
        guard let fast = MobileSecurityObject.commonForm(payload) else { return }
        let general: MobileSecurityObject
        do {
            general = try MobileSecurityObject(general: payload)
        } catch {
            disagree("MSO", "accept/reject (general: \(error.detail))", input)
        }
        let check = Check(structure: "MSO", input: input)
        check.field("version", fast.version.utf8, general.version.utf8)
        check.same("digestAlgorithm", fast.digestAlgorithm == general.digestAlgorithm)
        check.field("docType", fast.docType.utf8, general.docType.utf8)
        check.same("signed", fast.signed == general.signed)
        check.same("validFrom", fast.validFrom == general.validFrom)
        check.same("validUntil", fast.validUntil == general.validUntil)
        check.key("deviceKey", fast.deviceKey, general.deviceKey)
        check.same("valueDigests count", fast.valueDigests.count == general.valueDigests.count)
        for (name, fastIDs) in fast.valueDigests {
            guard let generalIDs = general.valueDigests[name] else { check.fail("valueDigests namespace") }
            check.same("valueDigests ids", fastIDs.count == generalIDs.count)
            for (id, digest) in fastIDs {
                guard let other = generalIDs[id] else { check.fail("valueDigests id") }
                check.field("valueDigests digest", digest, other)
            }
        }
        // Namespace names by their bytes, which dictionary lookup alone may not distinguish.
        check.same(
            "valueDigests names",
            Set(fast.valueDigests.keys.map { Array("\($0)".utf8) }) == Set(general.valueDigests.keys.map { Array("\($0)".utf8) }))
    }

    static func issuerSignedItem(content: ArraySlice<UInt8>, _ input: [UInt8]) {
        var wrapped: [UInt8] = [0xd8, 0x18]
        CBOR.appendHead(major: 2, UInt64(content.count), to: &wrapped)
        wrapped.append(contentsOf: content)
        let tagged = wrapped[...]
        let inner = tagged[(tagged.count - content.count)...]
        // The reader the DeviceResponse readers use: common form first, general otherwise.
        let combined: IssuerSignedItem?
        do {
            combined = try IssuerSignedItem(try CBORDecoder().decode(tagged), context: "fuzz")
        } catch {
            combined = nil
        }
        let general = try? IssuerSignedItem(generalTaggedBytes: tagged, content: inner)
        guard let readings = both("IssuerSignedItem", "the common form path", combined, general, input) else { return }
        let check = Check(structure: "IssuerSignedItem", input: input)
        check.item(readings.0, readings.1)
    }

    static func event(_ bytes: [UInt8]) {
        guard let fast = EventParser().commonForm(bytes) else { return }
        guard let object = (try? JSONParser().parse(bytes))?.objectValue else {
            disagree("event", "accept/reject (general: not a JSON object)", bytes)
        }
        let general: VerificationRequest
        switch EventParser().parse(attributes: object, data: object["data"]) {
        case .success(let request): general = request
        case .failure(let rejection): disagree("event", "accept/reject (general: \(rejection.detail))", bytes)
        }
        let check = Check(structure: "event", input: bytes)
        check.field("id", fast.id.utf8, general.id.utf8)
        check.field("source", fast.source.utf8, general.source.utf8)
        check.same("time", fast.time == general.time)
        check.field("tenant", fast.tenant.utf8, general.tenant.utf8)
        check.same("requestedElements count", fast.requestedElements.count == general.requestedElements.count)
        for (a, b) in zip(fast.requestedElements, general.requestedElements) {
            check.field("requestedElements namespace", a.namespace.utf8, b.namespace.utf8)
            check.field("requestedElements element", a.element.utf8, b.element.utf8)
            check.same("requestedElements retention", a.retention == b.retention)
        }
        switch (fast.input, general.input) {
        case (.appleWalletApp(let payload, let nonce, let nonceText, let merchant), .appleWalletApp(let payload2, let nonce2, let nonceText2, let merchant2)):
            check.field("payload", payload, payload2)
            check.field("nonce", nonce, nonce2)
            check.field("nonce text", nonceText.utf8, nonceText2.utf8)
            check.field("merchantId", merchant.utf8, merchant2.utf8)
        case (.appleWalletWeb(let response, let info, let infoBytes, let origin), .appleWalletWeb(let response2, let info2, let infoBytes2, let origin2)):
            check.field("response", response, response2)
            check.field("encryptionInfo", info.utf8, info2.utf8)
            check.field("encryptionInfo bytes", infoBytes, infoBytes2)
            check.field("origin", origin.utf8, origin2.utf8)
        case (.isoDeviceResponse(let payload, let transcript, let key), .isoDeviceResponse(let payload2, let transcript2, let key2)):
            check.field("payload", payload, payload2)
            check.field("sessionTranscript", transcript, transcript2)
            check.same("ephemeralReaderKey presence", (key == nil) == (key2 == nil))
            check.field("ephemeralReaderKey", key ?? [], key2 ?? [])
        default:
            check.fail("flow")
        }
    }

    static func applePlaintext(_ bytes: [UInt8]) {
        let either = try? AppleEnvelope.deviceResponse(inPlaintext: bytes)
        let general: DeviceResponse?
        do {
            general = try DeviceResponse(try AppleEnvelope.identity(inPlaintext: bytes))
        } catch {
            general = nil
        }
        guard let readings = both("Apple plaintext", "the in-place reader", either, general, bytes) else { return }
        var check = Check(structure: "Apple plaintext", input: bytes)
        check.compare(readings.0, readings.1)
    }

    /// Both readings, or nil when both readers refuse; `reader` accepting
    /// what the general reader refuses, or the other way round, traps.
    static func both<Reading, General>(
        _ structure: String, _ reader: String, _ reading: Reading?, _ general: General?, _ input: [UInt8]
    ) -> (Reading, General)? {
        switch (reading, general) {
        case (nil, nil): return nil
        case (nil, _?): disagree(structure, "accept/reject (\(reader) refuses what the general accepts)", input)
        case (_?, nil): disagree(structure, "accept/reject (\(reader) accepts what the general refuses)", input)
        case (let reading?, let general?): return (reading, general)
        }
    }
}

/// Field-by-field comparison of two readings; the first difference traps.
struct Check {
    let structure: String
    let input: [UInt8]
    /// Where in the structure the fields being compared are.
    var path = ""

    func fail(_ field: String) -> Never {
        disagree(structure, path.isEmpty ? field : "\(path).\(field)", input)
    }

    func same(_ field: String, _ equal: Bool) {
        if !equal { fail(field) }
    }

    func field<A: Sequence, B: Sequence>(_ field: String, _ a: A, _ b: B) where A.Element == UInt8, B.Element == UInt8 {
        if !a.elementsEqual(b) { fail(field) }
    }

    func key(_ field: String, _ a: PublicKey, _ b: PublicKey) {
        same("\(field).type", a.type == b.type)
        same("\(field).point", a.uncompressedPoint == b.uncompressedPoint)
        same("\(field).ed25519", a.ed25519Raw == b.ed25519Raw)
    }

    mutating func compare(_ a: DeviceResponse, _ b: DeviceResponse) {
        field("version", a.version.utf8, b.version.utf8)
        same("status", a.status == b.status)
        same("documents count", a.documents.count == b.documents.count)
        for (index, (x, y)) in zip(a.documents, b.documents).enumerated() {
            path = "documents[\(index)]"
            field("docType", x.docType.utf8, y.docType.utf8)
            let (p, q) = (x.issuerSigned, y.issuerSigned)
            cose("issuerAuth", p.issuerAuth, q.issuerAuth)
            same("nameSpaces count", p.nameSpaces.count == q.nameSpaces.count)
            for (spaceIndex, (s, t)) in zip(p.nameSpaces, q.nameSpaces).enumerated() {
                path = "documents[\(index)].nameSpaces[\(spaceIndex)]"
                field("name", "\(s.name)".utf8, "\(t.name)".utf8)
                same("items count", s.items.count == t.items.count)
                for (itemIndex, (i, j)) in zip(s.items, t.items).enumerated() {
                    path = "documents[\(index)].nameSpaces[\(spaceIndex)][\(itemIndex)]"
                    item(i, j)
                }
            }
            path = "documents[\(index)]"
            switch (x.deviceSigned, y.deviceSigned) {
            case (nil, nil): break
            case (let d?, let e?):
                field("deviceSigned.nameSpacesBytes", d.nameSpacesBytes, e.nameSpacesBytes)
                same("deviceSigned.nameSpaces count", d.nameSpaces.count == e.nameSpaces.count)
                for (s, t) in zip(d.nameSpaces, e.nameSpaces) {
                    field("deviceSigned.nameSpaces name", "\(s.name)".utf8, "\(t.name)".utf8)
                    same("deviceSigned.nameSpaces elements", s.elements.count == t.elements.count)
                    for (u, v) in zip(s.elements, t.elements) { field("deviceSigned.nameSpaces element", "\(u)".utf8, "\(v)".utf8) }
                }
                switch (d.authentication, e.authentication) {
                case (.signature(let u), .signature(let v)): cose("deviceSignature", u, v)
                case (.mac(let u), .mac(let v)):
                    field("deviceMac.protected", u.protectedBytes, v.protectedBytes)
                    same("deviceMac.payload presence", (u.payload == nil) == (v.payload == nil))
                    field("deviceMac.payload", u.payload ?? [], v.payload ?? [])
                    field("deviceMac.tag", u.tag, v.tag)
                default: fail("deviceSigned.authentication kind")
                }
            default: fail("deviceSigned presence")
            }
        }
    }

    func cose(_ name: String, _ a: COSESign1, _ b: COSESign1) {
        field("\(name).protected", a.protectedBytes, b.protectedBytes)
        field("\(name).unprotected", a.unprotectedHeader.encoded, b.unprotectedHeader.encoded)
        same("\(name).payload presence", (a.payload == nil) == (b.payload == nil))
        field("\(name).payload", a.payload ?? [], b.payload ?? [])
        field("\(name).signature", a.signature, b.signature)
    }

    func item(_ a: IssuerSignedItem, _ b: IssuerSignedItem) {
        same("digestID", a.digestID == b.digestID)
        field("random", a.random, b.random)
        field("elementIdentifier", a.elementIdentifier.utf8, b.elementIdentifier.utf8)
        field("elementValue", a.elementValue.encoded, b.elementValue.encoded)
        field("taggedBytes", a.taggedBytes, b.taggedBytes)
    }
}

/// Traps with the structure and field, and the first bytes of the input in hex.
func disagree(_ structure: String, _ what: String, _ input: [UInt8]) -> Never {
    let prefix = input.prefix(16).map { String(format: "%02x", $0) }.joined()
    fatalError("parsers: \(structure): the common form and the general reader disagree on \(what) (input of \(input.count) bytes, \(prefix)…)")
}
