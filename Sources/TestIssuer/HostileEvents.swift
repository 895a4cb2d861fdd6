import CBOR
import Crypto
import Foundation
import MDoc
import Verification

extension TestIssuer {
    /// An attacker-controlled quantity of a request event: each one an event
    /// can carry any number of, bounded only by the event's size. Every event
    /// built along a dimension is well-formed up to the code that handles that
    /// dimension, so that code, not an earlier refusal, pays for the count.
    public enum HostileDimension: String, CaseIterable, Sendable {
        /// `count` documents in one DeviceResponse, each with a digest mismatch: the response reader's document loop, and every per-document check (chain, both signatures, MSO, digests) with its finding.
        case documents
        /// `documents` sealed in Apple's APPLE-HPKE-v1 envelope: the same loops behind decryption of the in-app flow.
        case documentsApp
        /// `documents` sealed as an ISO 18013-7 Annex C EncryptedResponse: the same loops behind decryption of the web flow.
        case documentsWeb
        /// `count` unknown top-level CloudEvents extension attributes: the event reader's attribute loop and its duplicate-name check.
        case eventAttributes
        /// `count` entries in data.requestedElements: the requested-element reader and everything that consults the request.
        case requestedElements
        /// `count` disclosed elements and a request for each: the outcome encoder, which matches every disclosed element to its request.
        case outcomeElements
        /// `count` unknown text keys in the (re-signed) MSO map: the MSO reader's skipping of other entries and its duplicate-key check.
        case msoUnknownKeys
        /// `count` unknown keys in the DeviceResponse map: the response reader's skipping of other entries.
        case responseUnknownKeys
        /// `count` unknown keys in the Document map: the document reader's skipping of other entries.
        case documentUnknownKeys
        /// `count` unknown keys in the IssuerSigned map: the IssuerSigned reader's skipping of other entries.
        case issuerSignedUnknownKeys
        /// `count` namespaces of one item each, in IssuerSigned.nameSpaces and the MSO's valueDigests (signed): both namespace readers and their duplicate-name checks.
        case namespaces
        /// `count` IssuerSignedItems in one namespace, each with its signed digest: the item reader and the digest check.
        case elements
        /// `count` digests in one namespace of the MSO's valueDigests (signed), few of them disclosed: the valueDigests reader.
        case digests
        /// `count` IssuerSignedItems whose elementValue is an array of `tag24ArrayLength` integers: the CBOR items decoded across separately decoded tag-24 contents.
        case tag24Items
        /// `count` namespaces of one element each in deviceSigned.nameSpaces (device-signed): the DeviceSigned reader.
        case deviceNamespaces
        /// `count` certificates in the issuerAuth x5chain: the chain header reader up to its certificate cap.
        case x5chain
        /// `count` elements each with a wrong digest: the digest check's findings and the report's merging of one check's details.
        case detail

        /// The flow its events are built in.
        public var flow: Flow {
            switch self {
            case .documentsApp: .appleWalletApp
            case .documentsWeb: .appleWalletWeb
            default: .isoDeviceResponse
            }
        }
    }

    /// Events that grow along one `HostileDimension`, and valid events of a
    /// chosen size to set them against: a verifier must spend time linear in
    /// an event's size and memory bounded by it, whatever the event holds.
    ///
    /// Everything comes from one `EventFactory`; each call works on a copy of
    /// it, so the same call builds the same structure every time.
    public struct HostileEvents: Sendable {
        public let factory: EventFactory

        /// Elements in each tag24Items item's array: enough that decoding the
        /// values, not reading the items, dominates.
        public static let tag24ArrayLength = 1_000

        public var now: Date { factory.now }

        public init(now: Date, seed: UInt64) throws {
            factory = try EventFactory(now: now, seed: seed)
        }

        /// The tenant configuration that verifies the factory's valid events.
        public func verifier() throws -> Verifier {
            try factory.verifier()
        }

        /// A config directory `veridoc verify --config` accepts for these events; returns the path of config.json.
        @discardableResult
        public func writeConfiguration(to directory: URL) throws -> URL {
            try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        }

        // MARK: sizes

        /// An event whose size grows linearly with `count` along `dimension` (its JSON).
        public func event(_ dimension: HostileDimension, count: Int) throws -> [UInt8] {
            guard count >= 0 else { throw FixtureError("count must not be negative") }
            var factory = self.factory
            switch dimension {
            case .documents, .documentsApp, .documentsWeb:
                return try Self.documents(&factory, flow: dimension.flow, count: count)
            case .eventAttributes:
                let json = try factory.event(.isoDeviceResponse).json()
                var members: [UInt8] = []
                members.reserveCapacity(count * 14)
                for index in 0..<count { members.append(contentsOf: "\"x\(index)\":\"v\",".utf8) }
                return try Self.inserting(members, after: "{", in: json)
            case .requestedElements:
                let json = try factory.event(.isoDeviceResponse).json()
                return try Self.requesting(Self.extraNames(count), in: json)
            case .outcomeElements:
                factory.credential.nameSpaces[0].elements += Self.extraNames(count).map { Credential.Element($0, true) }
                return try Self.requesting(Self.extraNames(count), in: try factory.event(.isoDeviceResponse).json())
            case .elements:
                factory.credential.nameSpaces[0].elements += Self.extraNames(count).map { Credential.Element($0, true) }
                return try factory.event(.isoDeviceResponse).json()
            case .namespaces:
                factory.credential.nameSpaces += (0..<count).map { Credential.NameSpace(name: "ns.\($0)", elements: [Credential.Element("e", true)]) }
                return try factory.event(.isoDeviceResponse).json()
            case .tag24Items:
                let value = CBOR.array((0..<Self.tag24ArrayLength).map { .unsigned(UInt64($0 % 24)) })
                factory.credential.nameSpaces[0].elements += Self.extraNames(count).map { Credential.Element($0, value) }
                return try factory.event(.isoDeviceResponse).json()
            case .digests:
                // Issued with `count` more elements than it discloses: selective
                // disclosure, so the MSO carries every digest and the event verifies.
                let disclosed = Set(factory.credential.nameSpaces[0].elements.map(\.identifier))
                factory.credential.nameSpaces[0].elements += Self.extraNames(count).map { Credential.Element($0, true) }
                return try Self.presenting(&factory) { issued in
                    issued.nameSpaces[0].items.removeAll { !disclosed.contains($0.identifier) }
                }
            case .detail:
                factory.credential.nameSpaces[0].elements += Self.extraNames(count).map { Credential.Element($0, true) }
                let extra = Set(Self.extraNames(count))
                return try Self.presenting(&factory) { issued in
                    // Changed after signing, each keeping its digestID and salt: one finding per element.
                    issued.nameSpaces[0].items = issued.nameSpaces[0].items.map { item in
                        extra.contains(item.identifier) ? SignedItem(digestID: item.digestID, random: item.random, identifier: item.identifier, value: false) : item
                    }
                }
            case .msoUnknownKeys:
                let authority = factory.authority
                return try Self.presenting(&factory) { issued in
                    try Self.resigning(&issued, with: authority) { $0 + Self.unknownKeys(count) }
                }
            case .x5chain:
                let certificate = CBOR.bytes(factory.authority.documentSigner.der)
                return try Self.presenting(&factory) { issued in
                    // The unprotected header is outside the signature, which therefore still verifies.
                    issued.issuerAuth = issued.issuerAuth.mappingCOSEPart(1) { _ in
                        .map([CBOR.MapEntry(33, .array([CBOR](repeating: certificate, count: count)))])
                    }
                }
            case .issuerSignedUnknownKeys:
                return try Self.presenting(&factory, document: { _, document in
                    guard case .map(let entries)? = document["issuerSigned"] else { return document }
                    return document.replacing("issuerSigned", with: .map(entries + Self.unknownKeys(count)))
                })
            case .documentUnknownKeys:
                return try Self.presenting(&factory, document: { _, document in
                    guard case .map(let entries) = document else { return document }
                    return .map(entries + Self.unknownKeys(count))
                })
            case .responseUnknownKeys:
                let event = try factory.event(.isoDeviceResponse)
                let response = try CBORDecoder().decode(event.deviceResponse).value
                guard case .map(let entries) = response else { throw FixtureError("DeviceResponse is not a map") }
                return event.replacingPayload(CBOR.map(entries + Self.unknownKeys(count)).encoded()).json()
            case .deviceNamespaces:
                let event = try factory.event(.isoDeviceResponse)
                let issued = try factory.authority.issue(
                    factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: IssuanceOptions(now: factory.now), using: &factory.random)
                let spaces = CBOR.map((0..<count).map { CBOR.MapEntry(.text("dns.\($0)"), ["e": true]) })
                let document = try Self.present(issued, deviceNameSpaces: spaces, holder: factory.holder, transcript: event.transcript)
                return event.replacingPayload(TestIssuer.deviceResponse(documents: [document])).json()
            }
        }

        /// The largest event along `dimension` not over `maxBytes`, and its count.
        /// Sizes are nearly linear in the count (names and heads widen with it),
        /// so a secant search on the count lands in a few builds.
        public func event(_ dimension: HostileDimension, maxBytes: Int) throws -> (json: [UInt8], count: Int) {
            let probe = 16
            let small = try event(dimension, count: probe)
            let larger = try event(dimension, count: 2 * probe)
            var best: (json: [UInt8], count: Int)? = small.count <= maxBytes ? (small, probe) : nil
            if larger.count <= maxBytes { best = (larger, 2 * probe) }
            var known = (count: 2 * probe, bytes: larger.count)
            var perItem = max(1, Double(larger.count - small.count) / Double(probe))
            for _ in 0..<8 {
                let target = max(0, known.count + Int((Double(maxBytes - known.bytes) / perItem).rounded(.down)))
                guard target != known.count else { break }
                let json = try event(dimension, count: target)
                if json.count <= maxBytes, target > best?.count ?? -1 { best = (json, target) }
                // Close enough: within two items of the limit, under it.
                if json.count <= maxBytes, Double(maxBytes - json.count) < 2 * perItem { break }
                perItem = max(1, Double(json.count - known.bytes) / Double(target - known.count))
                known = (target, json.count)
            }
            if let best { return best }
            let empty = try event(dimension, count: 0)
            guard empty.count <= maxBytes else { throw FixtureError("no \(dimension.rawValue) event fits in \(maxBytes) bytes") }
            return (empty, 0)
        }

        /// A valid event of about `bytes` bytes (not over them) in `flow`: the
        /// factory's credential with a portrait grown to fill it — the normal
        /// event of the same size that hostile ones are set against.
        public func normalEvent(bytes: Int, flow: Flow = .isoDeviceResponse) throws -> [UInt8] {
            func build(_ portraitSize: Int) throws -> [UInt8] {
                var factory = self.factory
                var portrait: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x48, 0x00, 0x48, 0x00, 0x00]
                // Image content does not change what verifying costs (a digest over its bytes).
                portrait += [UInt8](repeating: 0x5A, count: max(0, portraitSize - portrait.count - 2)) + [0xFF, 0xD9]
                factory.credential[Credential.mDLNameSpace, "portrait"] = .bytes(portrait)
                return try factory.event(flow).json()
            }
            var size = 3_000
            var best = try build(size)
            guard best.count <= bytes else { throw FixtureError("no valid \(flow.rawValue) event fits in \(bytes) bytes") }
            // Base64 carries 3 bytes in 4 characters; a head widening on the way
            // can overshoot by a few, and then the next step holds back more.
            var slack = 2
            for _ in 0..<8 {
                let step = Int(Double(bytes - best.count) * 0.75) - slack
                if step <= 0 { break }
                let json = try build(size + step)
                if json.count > bytes {
                    slack = 2 * slack + json.count - bytes
                    continue
                }
                size += step
                best = json
            }
            return best
        }

        // MARK: building blocks

        /// "e0", "e1", …: element names that no credential uses.
        static func extraNames(_ count: Int) -> [String] {
            (0..<count).map { "e\($0)" }
        }

        static func unknownKeys(_ count: Int) -> [CBOR.MapEntry] {
            (0..<count).map { CBOR.MapEntry(.text("k\($0)"), 0) }
        }

        /// `json` (an object) with `members` ("key":value, each followed by a comma) written right after `prefix`.
        static func inserting(_ members: [UInt8], after prefix: String, in json: [UInt8]) throws -> [UInt8] {
            let head = Array(prefix.utf8)
            guard json.starts(with: head) else { throw FixtureError("event JSON does not start with \(prefix)") }
            return head + members + json.dropFirst(head.count)
        }

        /// `json` with a request (willNotStore) for each of `names` in the mDL namespace.
        static func requesting(_ names: [String], in json: [UInt8]) throws -> [UInt8] {
            guard !names.isEmpty else { return json }
            var members = Array("\"requestedElements\":[".utf8)
            members.reserveCapacity(names.count * 90)
            for (index, name) in names.enumerated() {
                if index > 0 { members.append(UInt8(ascii: ",")) }
                members.append(contentsOf: "{\"element\":\"\(name)\",\"namespace\":\"\(Credential.mDLNameSpace)\",\"retention\":{\"intent\":\"willNotStore\"}}".utf8)
            }
            members.append(contentsOf: "],".utf8)
            // Keys are sorted, so `data` is the first member.
            return try inserting(members, after: "{\"data\":{", in: json)
        }

        /// A valid iso-device-response event whose one document is the factory's
        /// credential, issued, edited by `issued`, presented over the event's
        /// transcript and then edited by `document`.
        static func presenting(
            _ factory: inout EventFactory, _ edit: (inout IssuedDocument) throws -> Void = { _ in },
            document editDocument: (IssuedDocument, CBOR) -> CBOR = { $1 }
        ) throws -> [UInt8] {
            let event = try factory.event(.isoDeviceResponse)
            var issued = try factory.authority.issue(
                factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: IssuanceOptions(now: factory.now), using: &factory.random)
            try edit(&issued)
            let document = editDocument(issued, try factory.holder.present(issued, transcript: event.transcript))
            return event.replacingPayload(TestIssuer.deviceResponse(documents: [document])).json()
        }

        /// `issued` with its MSO's entries edited and signed again by `authority`'s document signer.
        static func resigning(_ issued: inout IssuedDocument, with authority: Authority, _ edit: ([CBOR.MapEntry]) -> [CBOR.MapEntry]) throws {
            let auth = try COSESign1(try CBORDecoder().decode(issued.issuerAuth.encoded()), context: "issuerAuth")
            guard case .map(let entries) = try CBORDecoder().decode(auth.payload ?? []).decodeEmbedded("MSO").value else {
                throw FixtureError("the MSO is not a map")
            }
            issued.issuerAuth = try COSESign1.sign(
                payload: CBOR.embedded(.map(edit(entries))).encoded(), key: authority.documentSignerKey, algorithm: authority.signatureAlgorithm,
                unprotected: [CBOR.MapEntry(33, .bytes(authority.documentSigner.der))])
        }

        /// A document whose deviceSigned.nameSpaces is `deviceNameSpaces`, device-signed over `transcript`.
        static func present(_ issued: IssuedDocument, deviceNameSpaces: CBOR, holder: Holder, transcript: SessionTranscript) throws -> CBOR {
            let nameSpacesBytes = CBOR.embedded(deviceNameSpaces).encoded()
            let signedBytes = DeviceAuthentication.bytes(transcript: transcript, docType: issued.docType, nameSpacesBytes: nameSpacesBytes[...])
            let signature = try COSESign1.sign(
                payload: nil, detachedPayload: signedBytes, key: holder.deviceKey, algorithm: .preferred(for: holder.deviceKey.type))
            return [
                "docType": .text(issued.docType),
                "issuerSigned": issued.issuerSigned,
                "deviceSigned": ["nameSpaces": .preEncoded(nameSpacesBytes), "deviceAuth": ["deviceSignature": signature]],
            ]
        }

        /// A DeviceResponse of `count` distinct one-element documents, each
        /// correctly signed by issuer and device but with its element changed
        /// after signing, in `flow`.
        static func documents(_ factory: inout EventFactory, flow: Flow, count: Int) throws -> [UInt8] {
            let event = try factory.event(flow)
            let credential = Credential(docType: Credential.mDLDocType, nameSpaces: [
                Credential.NameSpace(name: Credential.mDLNameSpace, elements: [Credential.Element("age_over_18", true)]),
            ])
            var documents: [CBOR] = []
            documents.reserveCapacity(count)
            for _ in 0..<count {
                let issued = try factory.authority.issue(
                    credential, deviceKey: factory.holder.deviceKey.publicKey, options: IssuanceOptions(now: factory.now), using: &factory.random)
                let altered = try issued.replacingValue(namespace: Credential.mDLNameSpace, identifier: "age_over_18", with: false)
                documents.append(try factory.holder.present(altered, transcript: event.transcript))
            }
            return try factory.replacingDeviceResponse(of: event, with: TestIssuer.deviceResponse(documents: documents)).json()
        }
    }
}

extension TestIssuer.EventFactory {
    /// `event` carrying `deviceResponse` instead of the one its holder made,
    /// sealed as its flow seals (to the merchant's `recipient` key, under the
    /// event's own transcript), so that any response reaches the verifier past
    /// decryption. In iso-device-response the response is the payload itself.
    public func replacingDeviceResponse(
        of event: TestIssuer.GeneratedEvent, with deviceResponse: [UInt8], recipient: TestIssuer.Merchant.KeySlot = .current
    ) throws -> TestIssuer.GeneratedEvent {
        let key = merchant.key(recipient).publicKey
        let payload = switch event.flow {
        case .appleWalletApp: try AppleEnvelope.seal(deviceResponse: deviceResponse, transcript: event.transcript, recipient: key)
        case .appleWalletWeb: try AnnexCEncryptedResponse.seal(deviceResponse: deviceResponse, transcript: event.transcript, recipient: key)
        case .isoDeviceResponse: deviceResponse
        case .openID4VPDCAPI: Array(try Self.openID4VPResponse(deviceResponse, to: try TenantKey(merchant.key(recipient))).utf8)
        }
        return TestIssuer.GeneratedEvent(
            flow: event.flow, fault: event.fault, attributes: event.attributes, data: event.data, requestedElements: event.requestedElements,
            deviceResponse: deviceResponse, transcript: event.transcript, expectedReasons: event.expectedReasons
        ).replacingPayload(payload)
    }
}
