import CBOR
import Crypto
import Foundation
import JOSE
import JSON
import MDoc
import Verification

extension TestIssuer {
    /// Choices that keep an event valid: the encodings verifiers must accept.
    public struct EventOptions: Sendable {
        public var x5chain: IssuanceOptions.X5ChainForm = .documentSigner
        public var taggedIssuerAuth = false
        /// iso-device-response only: authenticate with deviceMac and put the
        /// reader's key in the event (Apple's flows always sign).
        public var deviceMac = false
        /// `data.requestedDocTypes`: what the request asked for.
        public var requestedDocTypes: [String] = []
        /// Which of the merchant's keys the wallet encrypts to.
        public var recipient: Merchant.KeySlot = .current
        public var requestedElements: [RequestedElement] = []
        /// `data.ageAtLeast`: the `age(atLeast:)` questions the outcome answers.
        public var ageRequests: [AgeRequest] = []
        /// The event's `time`; nil means five seconds before the factory's `now`.
        public var time: Date?
        /// Present the credential this factory issued last again (the same
        /// MSO and issuerAuth bytes, a new device signature), as a holder
        /// proving their age to the same business again does; the first
        /// event of a factory is issued as usual. With a fault of what a
        /// holder can alter (an element, the signature, the session), the
        /// credential presented again is altered so.
        public var presentAgain = false
        /// One of Apple's mock responses instead of a real one (accepted only by a test tenant).
        public var mockShape: MockShape?
        /// The MSO's `status` member: where the issuer publishes revocation (nil: none).
        public var status: MSOStatus?

        public init() {}
    }

    /// Builds complete request events for the three flows, valid or with one
    /// `Fault`, from one authority, merchant, holder and credential.
    /// Not thread-safe by design: it is a value with its own generator, so each
    /// task of a load generator owns a copy with its own seed.
    public struct EventFactory: Sendable {
        public var authority: Authority
        public var merchant: Merchant
        public var holder: Holder
        public var credential: Credential
        /// Verification time: certificates, the MSO and the event time are laid out around it.
        public var now: Date
        public var source = "https://shop.example.com/checkout"
        public var random: SeededRandom
        /// The last valid credential issued, for `EventOptions.presentAgain`.
        private var lastIssued: IssuedDocument?

        public init(authority: Authority, merchant: Merchant, holder: Holder, credential: Credential, now: Date, seed: UInt64) {
            self.authority = authority
            self.merchant = merchant
            self.holder = holder
            self.credential = credential
            self.now = now
            random = SeededRandom(seed: seed)
        }

        /// Everything generated: a `curve` authority, the default merchant, a
        /// P-256 holder and an mDL drawn from `seed`.
        public init(curve: Curve = .p256, now: Date, seed: UInt64) throws {
            var random = SeededRandom(seed: seed)
            let credential = Credential.mobileDrivingLicence(now: now, using: &random)
            self.init(
                authority: try Authority(curve: curve, now: now), merchant: try Merchant(), holder: try Holder(),
                credential: credential, now: now, seed: random.next())
        }

        /// A verifier for the merchant's tenant trusting this factory's IACA (and `extraAnchors`).
        public func verifier(extraAnchors: [Certificate] = []) throws -> Verifier {
            try merchant.verifier(trusting: [authority.iaca] + extraAnchors)
        }

        /// A verifier for the merchant's tenant as a test tenant accepting
        /// `kinds`, with this factory's IACA as its test root.
        public func testVerifier(kinds: Set<TestKind> = Set(TestKind.allCases)) throws -> Verifier {
            Verifier(directory: TenantDirectory([try merchant.tenant(trusting: [authority.iaca], testConditions: TestConditions(kinds: kinds))]))
        }

        public mutating func event(_ flow: Flow, options: EventOptions = EventOptions(), fault: Fault? = nil) throws -> GeneratedEvent {
            var expected: [ReasonCode] = []
            if let fault {
                guard let reasons = fault.expectedReasons(for: flow) else { throw FixtureError("\(fault) does not apply to \(flow.rawValue)") }
                expected = reasons
            }
            if options.deviceMac && flow != .isoDeviceResponse { throw FixtureError("deviceMac exists only in iso-device-response") }
            if options.mockShape == .simulator && (flow != .appleWalletApp || merchant.teamID != TestKind.simulatorTeamID || options.deviceMac) {
                throw FixtureError("the Simulator's shape is apple-wallet-app with team ID \(TestKind.simulatorTeamID), device-signed")
            }

            let issued = try issueDocument(options: options, fault: fault)
            var attributes = [
                "specversion": "1.0", "id": random.uuidString(), "source": source, "type": VerificationRequest.eventType,
                "time": RFC3339.string(from: options.time ?? now - 5), "datacontenttype": "application/json",
            ]
            if fault == .staleRequest { attributes["time"] = RFC3339.string(from: now - TimeInterval(merchant.maxRequestAgeSeconds + 60)) }
            if fault == .missingEventID { attributes["id"] = nil }

            var (data, transcript, deviceResponse) = switch flow {
            case .appleWalletApp: try appleWalletApp(issued, options: options, fault: fault)
            case .appleWalletWeb: try appleWalletWeb(issued, options: options, fault: fault)
            case .isoDeviceResponse: try isoDeviceResponse(issued, options: options, fault: fault)
            case .openID4VPDCAPI: try openID4VP(issued, options: options, fault: fault)
            }
            data["tenant"] = fault == .unknownTenant ? "tenant-that-does-not-exist" : merchant.tenantID
            data["flow"] = flow.rawValue
            // "!" is in neither base64 alphabet.
            if fault == .malformedBase64 { data[flow == .appleWalletWeb ? "response" : "payload"] = "!!not-base64!!" }
            if fault == .forgedSessionToken { data["sessionToken"] = Data([IssuedNonce.version] + random.bytes(IssuedNonce.byteCount - 1)).base64EncodedString() }
            var event = GeneratedEvent(
                flow: flow, fault: fault, attributes: attributes, data: data, requestedElements: options.requestedElements,
                deviceResponse: deviceResponse, transcript: transcript, expectedReasons: expected)
            event.requestedDocTypes = fault == .unrequestedDocType ? ["eu.europa.ec.eudi.pid.1"] : options.requestedDocTypes
            event.ageRequests = options.ageRequests
            if flow == .openID4VPDCAPI {
                event.openID4VPForm = fault == .walletError ? .error : fault == .unsupportedFormat ? .clear : .encrypted
                if fault == .unrequestedElement || fault == .missingElement { event.requestedElements = Self.query(for: issued, fault: fault) }
            }
            if flow == .isoDeviceResponse {
                event.reader = try readerSigner(options, fault: fault)
                event.signAsReader()
            }
            return event
        }

        // MARK: the wallet answering a session

        /// What Apple's wallet returns to an app for `nonce` (PKIdentityDocument.encryptedData):
        /// the holder's valid mDL, for the merchant's identifiers, encrypted to its current key.
        /// `disclosing` limits the elements to those named (and the ages);
        /// `fault` issues the document with that defect (`.msoExpired`).
        public mutating func walletAnswer(appNonce nonce: [UInt8], disclosing claims: [RequestedElement]? = nil, fault: Fault? = nil) throws -> [UInt8] {
            var issued = try issueDocument(options: EventOptions(), fault: fault)
            if let claims { issued = Self.disclosing(issued, claims, ages: true) }
            let recipient = merchant.key(.current).publicKey
            let transcript = SessionTranscript.appleWalletApp(
                nonce: nonce, merchantID: merchant.merchantID, teamID: merchant.teamID, recipientKeyHash: AppleEnvelope.recipientKeyHash(of: recipient))
            let plaintext = try deviceResponse(issued, transcript: transcript, fault: nil)
            return try AppleEnvelope.seal(deviceResponse: plaintext, transcript: transcript, recipient: recipient)
        }

        /// What the wallet returns to a web page for a Digital Credentials request
        /// (the credential's `data.response`, decoded): encrypted to the key EncryptionInfo names.
        public mutating func walletAnswer(encryptionInfo: String, origin: String, disclosing claims: [RequestedElement]? = nil,
                                          fault: Fault? = nil) throws -> [UInt8] {
            guard let bytes = Base64.decodeURL(encryptionInfo) else { throw FixtureError("encryptionInfo is not base64url") }
            let info = try AnnexCEncryptionInfo(bytes: bytes[...])
            var issued = try issueDocument(options: EventOptions(), fault: fault)
            if let claims { issued = Self.disclosing(issued, claims, ages: true) }
            let transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: encryptionInfo, origin: origin)
            let plaintext = try deviceResponse(issued, transcript: transcript, fault: nil)
            return try AnnexCEncryptedResponse.seal(deviceResponse: plaintext, transcript: transcript, recipient: info.recipientPublicKey)
        }

        /// What a wallet returns to a web page for an OpenID4VP request over the
        /// Digital Credentials API with `response_mode` dc_api.jwt: the compact
        /// JWE of `{"vp_token": {"mdl": [DeviceResponse]}}`, sealed to the
        /// request's key (`kid` echoed), the device signing over the
        /// OpenID4VP DC API transcript of `origin`, `nonce` and that key.
        public mutating func walletAnswer(openID4VPNonce nonce: String, origin: String, responseKey: PublicKey, keyID: String?,
                                          disclosing claims: [RequestedElement]? = nil, credentialQueryID: String = "mdl",
                                          fault: Fault? = nil) throws -> String {
            var issued = try issueDocument(options: EventOptions(), fault: fault)
            if let claims { issued = Self.disclosing(issued, claims, ages: false) }
            guard let thumbprint = ECJWK.thumbprint(of: responseKey) else { throw FixtureError("OpenID4VP response keys are P-256") }
            let transcript = SessionTranscript.openID4VPDigitalCredentialsAPI(origin: origin, nonce: nonce, jwkThumbprint: thumbprint)
            let deviceResponse = try deviceResponse(issued, transcript: transcript, fault: nil)
            return try Self.openID4VPResponse(deviceResponse, to: responseKey, keyID: keyID, credentialQueryID: credentialQueryID)
        }

        /// What an iPhone reading the holder's ID reports (ProximityReader): the DeviceResponse and its SessionTranscript.
        public mutating func readerAnswer() throws -> (deviceResponse: [UInt8], sessionTranscript: [UInt8]) {
            let issued = try issueDocument(options: EventOptions(), fault: nil)
            let reader = try ReaderSession()
            return (try deviceResponse(issued, transcript: reader.transcript, fault: nil), reader.transcriptBytes)
        }

        /// The same read authenticated by a device MAC: the reader's ephemeral
        /// key (PKCS#8 DER) comes with it, as ProximityReader gives it from iOS 26.4.
        public mutating func readerAnswerWithDeviceMac() throws -> (deviceResponse: [UInt8], sessionTranscript: [UInt8], ephemeralReaderKey: [UInt8]) {
            let issued = try issueDocument(options: EventOptions(), fault: nil)
            let reader = try ReaderSession()
            let response = try deviceResponse(issued, transcript: reader.transcript, authentication: .mac(readerKey: reader.readerKey.publicKey), fault: nil)
            return (response, reader.transcriptBytes, try reader.readerKeyDER())
        }

        // MARK: issuer side

        private mutating func issueDocument(options: EventOptions, fault: Fault?) throws -> IssuedDocument {
            var issued: IssuedDocument
            if options.presentAgain, let lastIssued {
                // Faults of the issuance itself would need a new credential.
                if let fault, Self.issuanceFaults.contains(fault) { throw FixtureError("\(fault) needs a new credential, not one presented again") }
                issued = lastIssued
            } else {
                issued = try issue(options: options, fault: fault)
                if fault == nil { lastIssued = issued }
            }
            // What a holder (or an attacker) can do to a credential after it was issued.
            if fault == .flippedIssuerSignature { issued = issued.flippingIssuerSignature() }
            if fault == .alteredElement {
                issued = try issued.replacingValue(namespace: Credential.mDLNameSpace, identifier: "family_name", with: .text(Fault.alteredFamilyName))
            }
            switch options.mockShape {
            case .simulator?: issued = issued.zeroingIssuerSignature(removingCertificate: true)
            case .developerProfileWithoutIssuerSignature?: issued = issued.zeroingIssuerSignature(removingCertificate: false)
            case .developerProfile?, nil: break
            }
            return issued
        }

        static let issuanceFaults: Set<Fault> = [
            .untrustedIssuer, .expiredDocumentSigner, .signerWithoutExtendedKeyUsage, .msoNotYetValid, .msoExpired, .docTypeMismatch, .msoNotAnMSO,
            .signerCountryDiffersFromIACA, .issuingCountryDiffersFromSigner, .issuingJurisdictionDiffersFromSigner, .mistypedElements,
        ]

        private mutating func issue(options: EventOptions, fault: Fault?) throws -> IssuedDocument {
            var signer = authority
            var credential = self.credential
            var issuance = IssuanceOptions(now: now)
            issuance.x5chain = options.x5chain
            issuance.taggedIssuerAuth = options.taggedIssuerAuth
            issuance.status = options.status?.encoded
            switch fault {
            case .untrustedIssuer:
                signer = try Authority(curve: authority.curve, now: now, name: "Untrusted Test Issuer", state: "NV")
            case .expiredDocumentSigner:
                signer = try authority.reissuingDocumentSigner(.expired, now: now)
                // Signed while the signer was still valid, so only the chain check fails.
                issuance.signed = signer.documentSigner.notAfter - 86_400
            case .signerWithoutExtendedKeyUsage:
                signer = try authority.reissuingDocumentSigner(.withoutExtendedKeyUsage, now: now)
            case .msoNotYetValid:
                issuance.validFrom = now + 86_400
                issuance.validUntil = now + 31 * 86_400
            case .msoExpired:
                issuance.signed = now - 60 * 86_400
                issuance.validFrom = now - 60 * 86_400
                issuance.validUntil = now - 86_400
            case .docTypeMismatch:
                issuance.msoDocType = "org.iso.23220.photoid.1"
            case .msoNotAnMSO:
                // A well-formed, correctly signed tag-24 map that lacks the MSO's fields.
                issuance.payloadOverride = CBOR.embedded(["version": "1.0", "note": "not a MobileSecurityObject"]).encoded()
            case .signerCountryDiffersFromIACA:
                signer = try authority.reissuingDocumentSigner(country: "FR", state: authority.state, now: now)
                credential[Credential.mDLNameSpace, "issuing_country"] = "FR"
            case .issuingCountryDiffersFromSigner:
                credential[Credential.mDLNameSpace, "issuing_country"] = "FR"
            case .issuingJurisdictionDiffersFromSigner:
                credential[Credential.mDLNameSpace, "issuing_jurisdiction"] = .text(authority.state == "NV" ? "CA" : "NV")
            case .mistypedElements:
                credential[Credential.mDLNameSpace, "age_over_21"] = "true"
                credential[Credential.mDLNameSpace, "birth_date"] = .text("1990-01-01")
            default:
                break
            }
            return try signer.issue(credential, deviceKey: holder.deviceKey.publicKey, options: issuance, using: &random)
        }

        /// The DeviceResponse the holder returns; the device authenticates over
        /// `transcript` unless the fault makes it use another session's.
        private mutating func deviceResponse(
            _ issued: IssuedDocument, transcript: SessionTranscript, authentication: Holder.Authentication = .signature, fault: Fault?,
            mockShape: MockShape? = nil
        ) throws -> [UInt8] {
            if fault == .noDocuments { return TestIssuer.deviceResponse(documents: [], status: 0) }
            var deviceTranscript = transcript
            if fault == .deviceSignedOtherTranscript {
                deviceTranscript = SessionTranscript.appleWalletApp(
                    nonce: random.bytes(32), merchantID: merchant.merchantID, teamID: merchant.teamID, recipientKeyHash: random.bytes(32))
            }
            var document = try holder.present(issued, transcript: deviceTranscript, authentication: authentication)
            if mockShape == .simulator { document = TestIssuer.zeroingDeviceSignature(document) }
            return TestIssuer.deviceResponse(documents: [document], version: fault == .unsupportedFormat ? "2.0" : "1.0")
        }

        // MARK: flows

        private typealias FlowParts = (data: [String: String], transcript: SessionTranscript, deviceResponse: [UInt8])

        private mutating func appleWalletApp(_ issued: IssuedDocument, options: EventOptions, fault: Fault?) throws -> FlowParts {
            let nonce = random.bytes(32)
            let recipient = fault == .unknownRecipientKey ? try PrivateKey.generate(curve: .p256).publicKey : merchant.key(options.recipient).publicKey
            let transcript = SessionTranscript.appleWalletApp(
                nonce: nonce, merchantID: merchant.merchantID, teamID: merchant.teamID, recipientKeyHash: AppleEnvelope.recipientKeyHash(of: recipient))
            // An unsupported *envelope* still holds a valid response; only Apple's wrapper changes.
            let plaintext = try deviceResponse(issued, transcript: transcript, fault: fault == .unsupportedFormat ? nil : fault, mockShape: options.mockShape)
            var envelope = try AppleEnvelope.seal(deviceResponse: plaintext, transcript: transcript, recipient: recipient)
            switch fault {
            case .garbagePayload:
                envelope = Array("this is not an APPLE-HPKE-v1 envelope".utf8)
            case .unsupportedFormat:
                envelope = try patch(envelope) { $0.replacing("algorithm", with: "APPLE-HPKE-v2") }
            case .unsupportedHPKEMode:
                envelope = try patch(envelope) { $0.replacing("params", with: ($0["params"] ?? [:]).replacing("mode", with: 1)) }
            case .flippedCiphertext:
                envelope = try patch(envelope) { envelope in
                    guard case .bytes(let data)? = envelope["data"] else { return envelope }
                    return envelope.replacing("data", with: .bytes(flippingBit(data, at: data.count / 2)))
                }
            default:
                break
            }
            let eventNonce = fault == .wrongNonce ? random.bytes(32) : nonce
            let data = [
                "payload": Data(envelope).base64EncodedString(), "nonce": Data(eventNonce).base64EncodedString(), "merchantId": merchant.merchantID,
            ]
            return (data, transcript, plaintext)
        }

        private mutating func appleWalletWeb(_ issued: IssuedDocument, options: EventOptions, fault: Fault?) throws -> FlowParts {
            let nonce = random.bytes(32)
            let recipient = fault == .unknownRecipientKey ? try PrivateKey.generate(curve: .p256).publicKey : merchant.key(options.recipient).publicKey
            let encryptionInfo = GeneratedEvent.base64URL(AnnexCEncryptionInfo.encode(nonce: nonce, recipient: recipient))
            let transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: encryptionInfo, origin: merchant.origin)
            let plaintext = try deviceResponse(issued, transcript: transcript, fault: fault == .unsupportedFormat ? nil : fault)
            var response = try AnnexCEncryptedResponse.seal(deviceResponse: plaintext, transcript: transcript, recipient: recipient)
            switch fault {
            case .garbagePayload:
                response = Array("this is not an Annex C EncryptedResponse".utf8)
            case .unsupportedFormat:
                response = try patch(response) { $0.mappingCOSEPart(0) { _ in "openid4vp" } }
            case .flippedCiphertext:
                response = try patch(response) { response in
                    response.mappingCOSEPart(1) { fields in
                        guard case .bytes(let ciphertext)? = fields["cipherText"] else { return fields }
                        return fields.replacing("cipherText", with: .bytes(flippingBit(ciphertext, at: ciphertext.count / 2)))
                    }
                }
            default:
                break
            }
            // The server's EncryptionInfo for another request: the transcript hash
            // changes, and Annex C has no pre-check to name it.
            let eventInfo = fault == .wrongNonce
                ? GeneratedEvent.base64URL(AnnexCEncryptionInfo.encode(nonce: random.bytes(32), recipient: recipient)) : encryptionInfo
            let data = ["response": GeneratedEvent.base64URL(response), "encryptionInfo": eventInfo, "origin": merchant.origin]
            return (data, transcript, plaintext)
        }

        /// OpenID4VP over the DC API, as a wallet answers a dc_api.jwt request
        /// made with the merchant's key (`kid` its thumbprint): the
        /// presentation under `vp_token`, sealed in a JWE.
        private mutating func openID4VP(_ issued: IssuedDocument, options: EventOptions, fault: Fault?) throws -> FlowParts {
            let nonce = GeneratedEvent.base64URL(random.bytes(32))
            let recipient = try TenantKey(fault == .unknownRecipientKey ? try PrivateKey.generate(curve: .p256) : merchant.key(options.recipient))
            let clear = fault == .unsupportedFormat
            let transcript = SessionTranscript.openID4VPDigitalCredentialsAPI(
                origin: merchant.origin, nonce: nonce, jwkThumbprint: clear ? nil : recipient.thumbprint)
            // A DCQL wallet discloses what the query asks, no more (unless the fault is that it does).
            let asked = fault == .unrequestedElement || fault == .missingElement ? Self.query(for: issued, fault: fault) : options.requestedElements
            var presented = issued
            if fault != .unrequestedElement && (!asked.isEmpty || !options.ageRequests.isEmpty) {
                presented = Self.disclosing(issued, asked, ages: !options.ageRequests.isEmpty)
            }
            let plaintext = try deviceResponse(presented, transcript: transcript, fault: clear ? nil : fault)
            var response = clear ? GeneratedEvent.base64URL(plaintext) : try Self.openID4VPResponse(plaintext, to: recipient)
            switch fault {
            case .garbagePayload:
                response = "this is not a JWE"
            case .flippedCiphertext:
                var segments = response.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard let ciphertext = Base64.decodeURLUnpadded(segments[3]) else { throw FixtureError("sealed JWE without ciphertext") }
                segments[3] = GeneratedEvent.base64URL(flippingBit(ciphertext, at: ciphertext.count / 2))
                response = segments.joined(separator: ".")
            case .walletError:
                response = "access_denied"
            default:
                break
            }
            let eventNonce = fault == .wrongNonce ? GeneratedEvent.base64URL(random.bytes(32)) : nonce
            return (["response": response, "nonce": eventNonce, "origin": merchant.origin], transcript, plaintext)
        }

        /// `issued` with only the elements `claims` names (and, with `ages`, every `age_over_NN`).
        static func disclosing(_ issued: IssuedDocument, _ claims: [RequestedElement], ages: Bool) -> IssuedDocument {
            var presented = issued
            presented.nameSpaces = issued.nameSpaces.map { space in
                (space.name, space.items.filter { item in
                    claims.contains { $0.namespace == space.name && $0.element == item.identifier } || (ages && item.identifier.hasPrefix("age_over_"))
                })
            }.filter { !$0.items.isEmpty }
            return presented
        }

        /// The compact JWE a wallet returns for `deviceResponse`: `{"vp_token": {"mdl": [base64url]}}` sealed to `recipient`.
        static func openID4VPResponse(_ deviceResponse: [UInt8], to recipient: TenantKey) throws -> String {
            try openID4VPResponse(deviceResponse, to: recipient.privateKey.publicKey, keyID: recipient.keyID)
        }

        /// `deviceResponse` as a wallet returns it for dc_api.jwt, sealed to
        /// `recipient` with `kid` `keyID`, under the query's credential id.
        public static func openID4VPResponse(_ deviceResponse: [UInt8], to recipient: PublicKey, keyID: String?,
                                             credentialQueryID: String = "mdl") throws -> String {
            var token = JSONObject()
            token[credentialQueryID] = [.string(GeneratedEvent.base64URL(deviceResponse))]
            let payload: JSONValue = ["vp_token": .object(token)]
            return try CompactJWE.seal(payload.jsonBytes(keyOrder: .insertion), to: recipient, keyID: keyID)
        }

        /// The requested elements of `unrequestedElement` (the first the
        /// credential holds) and `missingElement` (all it holds, and one more).
        private static func query(for issued: IssuedDocument, fault: Fault?) -> [RequestedElement] {
            let held = issued.nameSpaces.flatMap { space in space.items.map { RequestedElement(namespace: space.name, element: $0.identifier, retention: .willNotStore) } }
            guard fault == .missingElement else { return Array(held.prefix(1)) }
            let namespace = held.first?.namespace ?? "org.iso.18013.5.1"
            return held + [RequestedElement(namespace: namespace, element: "element_this_credential_lacks", retention: .willNotStore)]
        }

        /// Whether the event's device authenticates with a MAC.
        static func usesDeviceMac(_ options: EventOptions, fault: Fault?) -> Bool {
            options.deviceMac || fault == .readerKeyNotInTranscript || fault == .unboundDeviceMac
        }

        private mutating func isoDeviceResponse(_ issued: IssuedDocument, options: EventOptions, fault: Fault?) throws -> FlowParts {
            var reader = try ReaderSession()
            if fault == .readerKeyNotInTranscript { reader = try reader.supplying(try PrivateKey.generate(curve: .p256)) }
            let mac = Self.usesDeviceMac(options, fault: fault)
            let authentication: Holder.Authentication = mac ? .mac(readerKey: reader.readerKey.publicKey) : .signature
            var transcript = reader.transcript
            var transcriptBytes = reader.transcriptBytes
            if fault == .foreignTranscript {
                transcript = SessionTranscript.appleWalletApp(
                    nonce: random.bytes(32), merchantID: merchant.merchantID, teamID: merchant.teamID,
                    recipientKeyHash: AppleEnvelope.recipientKeyHash(of: merchant.key(.current).publicKey))
                transcriptBytes = transcript.encoded
            }
            let plaintext = try deviceResponse(issued, transcript: transcript, authentication: authentication, fault: fault)
            let payload = fault == .garbagePayload ? Array("this is not a DeviceResponse".utf8) : plaintext
            var data = ["payload": Data(payload).base64EncodedString(), "sessionTranscript": Data(transcriptBytes).base64EncodedString()]
            if mac { data["ephemeralReaderKey"] = Data(try reader.readerKeyDER()).base64EncodedString() }
            return (data, transcript, plaintext)
        }

        /// The reader that signs an iso-device-response event: the merchant's
        /// registered one for a MAC, an unregistered key for `forgedReaderSignature`.
        private func readerSigner(_ options: EventOptions, fault: Fault?) throws -> GeneratedEvent.ReaderSigner? {
            if fault == .forgedReaderSignature {
                return GeneratedEvent.ReaderSigner(id: Merchant.readerID, key: try PrivateKey.generate(curve: .p256), tenant: merchant.tenantID)
            }
            guard Self.usesDeviceMac(options, fault: fault), fault != .unboundDeviceMac, let key = merchant.readerKey else { return nil }
            return GeneratedEvent.ReaderSigner(id: Merchant.readerID, key: key, tenant: merchant.tenantID)
        }

        private func patch(_ encoded: [UInt8], _ edit: (CBOR) -> CBOR) throws -> [UInt8] {
            edit(try CBORDecoder().decode(encoded).value).encoded()
        }
    }
}
