import JSON

/// One entry of `tenants`, as written: paths are not yet read (Verification
/// loads the keys and certificates they name).
///
/// A tenant setting lives here and nowhere else: its typed field, its
/// reading and validation in `init`, and its entry in
/// Schemas/config.schema.json (`$defs.tenant`). `knownKeys` is what `init`
/// reads, so the list cannot drift from the reader, and SettingsTests holds
/// the schema to it: a setting added on one side only fails there, and a
/// misspelt one is refused by `SettingsObject.finish`, naming it.
public struct TenantSettings: Sendable, Equatable {
    public struct VICAL: Sendable, Equatable {
        public var file: String
        public var anchors: [String]
        /// How long past its nextUpdate the list is still used (docs/trust-anchors.md): 0 by default, at most `maxGraceSeconds`.
        public var graceSeconds: Int = 0

        /// A week: long enough to ride out a publisher's or a fetch job's
        /// outage, short enough that an IACA the publisher withdrew does not
        /// stay trusted for long.
        public static let maxGraceSeconds = 604_800
    }

    /// A `retentionDefaults` entry: the shape of a request's `requestedElements`.
    public struct RetentionDefault: Sendable, Equatable {
        public var namespace: String
        public var element: String
        public var intent: Intent

        /// `retention.intent`, read once: `days` only with mayStore.
        public enum Intent: Sendable, Equatable {
            case willNotStore
            case mayStore(days: Int?)
        }
    }

    public var path: String
    public var id: String
    public var merchantIDs: [String]
    public var teamID: String?
    public var encryptionKeys: [String]
    public var trustAnchors: [String]
    public var origins: [String]
    public var maxRequestAgeSeconds: Int?
    /// Only nonces `veridoc serve` issued are accepted (`request.nonce_unknown` otherwise).
    public var requireIssuedNonces: Bool
    /// The longest a session of this tenant may live (`POST /v1/sessions` `ttlSeconds`).
    public var maxSessionSeconds: Int?
    public var vicals: [VICAL]
    public var pinnedDocumentSigners: [String]
    public var maxRetentionDays: Int?
    public var retentionDefaults: [RetentionDefault]
    public var outcomeRecipientKey: String?
    /// The session API's keys for this tenant, as `sha256:<64 hex digits>` of
    /// each key: the keys themselves are never written down.
    public var apiKeyHashes: [String]
    /// What `POST /v1/reader-tokens` signs with (Apple Business Register).
    public var readerTokens: ReaderTokens?
    /// The only docTypes and elements serve makes sessions for (and so signs
    /// requests for); empty: any. What a leaked API key can have the
    /// tenant's certificate ask of a wallet is then what the business
    /// registered, not anything.
    public var requestableElements: [RequestableElements] = []
    /// What serve signs the web flow's DeviceRequests with (reader
    /// authentication): `webReader`, one identity or, while a renewed
    /// certificate takes over, several.
    public var webReaders: [WebReader] = []
    /// Registered proximity readers, each id once.
    public var readers: [Reader] = []
    /// Whether iso-device-response accepts OpenID4VP transcripts, whose
    /// verifier Veridoc cannot check (docs/device-authentication.md §2).
    public var acceptOpenID4VPTranscripts = true
    /// Whether openid4vp-dc-api accepts a response in the clear (`dc_api`)
    /// rather than encrypted to Veridoc (`dc_api.jwt`). Off by default: in
    /// the clear, the response passes through the page's scripts and the
    /// integrator's servers readable.
    public var acceptUnencryptedOpenID4VP = false
    /// The verifier identities serve signs OpenID4VP request objects with
    /// (`openID4VPVerifier`, one or several like `webReader`); empty: none
    /// are signed.
    public var openID4VPVerifiers: [OpenID4VPVerifier] = []
    /// Whether serve may hand out unsigned OpenID4VP requests
    /// (`openid4vp-v1-unsigned`), which a wallet cannot attribute to anyone
    /// but the origin; a test tenant may without saying so.
    public var openID4VPUnsignedRequests = false
    /// The Digital Credentials protocols a web session (apple-wallet-web)
    /// offers in one `navigator.credentials.get`, in the order the browser
    /// should prefer them; OpenID4VP only where the tenant can make such
    /// requests (`openID4VPVerifier`, `openID4VPUnsignedRequests`, or a test tenant).
    public var digitalCredentialsProtocols: [DigitalCredentialsProtocol] = [.orgISOMdoc, .openID4VP]

    public enum DigitalCredentialsProtocol: String, Sendable, CaseIterable {
        case orgISOMdoc = "org-iso-mdoc"
        case openID4VP = "openid4vp"
    }

    /// How revocation references in MSOs are checked (docs/revocation.md).
    public var status = StatusPolicy()

    /// Where the worker POSTs this tenant's outcome events (docs/webhooks.md).
    public var webhooks: [Webhook] = []

    /// A `webhooks` entry: one receiver, signed for under Standard Webhooks.
    public struct Webhook: Sendable, Equatable {
        /// Names the endpoint in stored deliveries, metrics and `veridoc webhooks`: letters, digits, `_` and `-`, unique in its tenant.
        public var id: String
        public var url: String
        /// The event types it receives; all of `eventTypes` unless listed.
        public var events: [String]
        /// Files each holding one `whsec_` secret; every one signs (`v1,`), so a receiver may rotate.
        public var secrets: [String]
        /// Files each holding an Ed25519 private key (PEM) that signs as well
        /// (`v1a,`), one or, during a rotation, several (`signingKey` in the
        /// file: one path or an array); their public keys are served by `veridoc serve`.
        public var signingKeys: [String]
        /// Deliveries to it under way at once, and started per second at most, all workers together.
        public var maxConcurrency: Int
        public var maxPerSecond: Int
        /// Where it was configured, for messages.
        public var setting: String

        /// The event types a webhook may receive.
        public static let eventTypes = ["veridoc.verification.completed.v1", "veridoc.credential.status-changed.v1"]
        public static let maxIDLength = 64
        public static let maxSecrets = 4
    }

    /// The tenant's `status` object.
    public struct StatusPolicy: Sendable, Equatable {
        public var mode: Mode = .required
        /// How long an event may wait for a list that is not cached before it is undetermined.
        public var maxWaitSeconds: Int = 10
        /// Whether retained accepted results are re-read when their lists are refetched.
        public var recheckAfterAcceptance = true

        public enum Mode: String, Sendable, Equatable, CaseIterable {
            /// An undetermined status rejects.
            case required
            /// An undetermined status verifies, and the outcome says so.
            case bestEffort
            /// Nothing is fetched; the outcome says `not_checked`.
            case off
        }

        /// A few minutes at most: an event waiting longer holds its partition's commits back.
        public static let maxWaitSecondsLimit = 300

        public init() {}
    }

    /// Apple's test conditions (docs/test-mode.md): the tenant accepts the mock responses of `kinds`,
    /// checks issuers only against `trustAnchors` (test roots such as
    /// Apple's), and marks every outcome as a test.
    public var testConditions: TestConditions?

    public struct TestConditions: Sendable, Equatable {
        /// Each at most once.
        public var kinds: [Kind]
        /// Test roots: the only issuers a test tenant trusts.
        public var trustAnchors: [String]

        /// A `kinds` entry, by its name in the file.
        public enum Kind: String, Sendable, Equatable, CaseIterable {
            case simulator
            case developerProfile
        }
        /// The Team ID Apple's Simulator puts in the session transcript.
        public static let simulatorTeamID = "PassKit_Identity_Test_Team_ID"
    }

    /// A `readers` entry: a proximity reader whose signature over a submission
    /// lets a device MAC count (docs/device-authentication.md).
    public struct Reader: Sendable, Equatable {
        /// The reader instance identifier (ProximityReader's `readerInstanceIdentifier`).
        public var id: String
        /// A PEM P-256 public key (SubjectPublicKeyInfo) whose private half stays on the reader.
        public var publicKey: String
    }

    public struct ReaderTokens: Sendable, Equatable {
        /// The token's `iss`.
        public var brandID: String
        /// The header's `kid`.
        public var keyID: String
        /// A P-256 private key in PEM, a file only its owner can read.
        public var signingKey: String
    }

    /// The web reader identity: the certificate Apple Business issued for the
    /// web flow (leaf first, in one PEM file) and its private key.
    public struct WebReader: Sendable, Equatable {
        /// PEM certificates, leaf first.
        public var certificates: String
        /// A P-256 private key in PEM, a file only its owner can read.
        public var privateKey: String
        /// Where it was configured (`tenants[0].webReader`, `…webReader[1]`), for messages.
        public var setting: String
    }

    /// A `requestableElements` entry: elements of one namespace of one docType
    /// (an age of N is asked as `age_over_NN`, or `age_in_years` from 100).
    public struct RequestableElements: Sendable, Equatable {
        public var docType: String
        public var namespace: String
        public var elements: [String]
    }

    /// The OpenID4VP verifier identity: an X.509 certificate chain (leaf
    /// first) whose leaf certifies the P-256 key that signs request objects,
    /// and how `client_id` names it.
    public struct OpenID4VPVerifier: Sendable, Equatable {
        public enum ClientIDPrefix: String, Sendable, CaseIterable {
            /// `x509_san_dns:<the leaf's first dNSName>`.
            case x509SanDNS = "x509_san_dns"
            /// `x509_hash:<base64url SHA-256 of the leaf's DER>`.
            case x509Hash = "x509_hash"
        }

        public var certificates: String
        public var privateKey: String
        public var clientIDPrefix: ClientIDPrefix
        /// Where it was configured, for messages.
        public var setting: String
    }

    /// The most signers one purpose may hold: a current one and its renewals.
    public static let maxSignersPerPurpose = 4

    /// The longest session: a day. A nonce is for one sitting, not for later.
    public static let maxSessionSecondsLimit = 86_400
    /// The longest tenant id: ids are keys of every stored row.
    public static let maxIDLength = 256
    /// The longest retention a setting may name (about 2,700 years: effectively unbounded, but finite).
    public static let maxRetentionDaysLimit = 1_000_000

    /// The members a tenant may have: those `init` reads (every one of them,
    /// whatever the tenant holds, so a minimal tenant shows them all).
    public static let knownKeys: [String] = {
        guard let minimal = try? JSONParser().parse(#"{"id": "t"}"#), var object = try? SettingsObject(minimal, path: "tenants[0]"),
              (try? TenantSettings(&object)) != nil
        else { return [] }
        return object.takenKeys
    }()

    init(_ object: inout SettingsObject) throws(ConfigError) {
        path = object.path
        guard let id = try object.string("id"), !id.isEmpty, id.utf8.count <= Self.maxIDLength else {
            throw ConfigError("\(object.setting("id")): a non-empty string of at most \(Self.maxIDLength) bytes is required")
        }
        self.id = id
        merchantIDs = try object.strings("merchantIds")
        teamID = try object.nonEmptyString("teamId")
        if !merchantIDs.isEmpty && teamID == nil { throw ConfigError("\(object.setting("teamId")): required with merchantIds") }
        encryptionKeys = try object.strings("encryptionKeys")
        trustAnchors = try object.strings("trustAnchors")
        origins = try object.strings("origins")
        for (index, origin) in origins.enumerated() {
            if let problem = WebOrigin.problem(origin) { throw ConfigError("\(object.setting("origins"))[\(index)]: not a web origin as browsers report it: \(problem)") }
        }
        maxRequestAgeSeconds = try object.integer("maxRequestAgeSeconds", range: 1...Int(Int32.max))
        requireIssuedNonces = try object.bool("requireIssuedNonces") ?? false
        maxSessionSeconds = try object.integer("maxSessionSeconds", range: 1...Self.maxSessionSecondsLimit)
        vicals = try object.objects("vicals") { (vical: inout SettingsObject) throws(ConfigError) -> VICAL in
            guard let file = try vical.nonEmptyString("file") else { throw ConfigError("\(vical.setting("file")): required") }
            let anchors = try vical.strings("anchors")
            guard !anchors.isEmpty else { throw ConfigError("\(vical.setting("anchors")): at least one anchor is required") }
            let grace = try vical.integer("graceSeconds", range: 0...VICAL.maxGraceSeconds) ?? 0
            return VICAL(file: file, anchors: anchors, graceSeconds: grace)
        } ?? []
        pinnedDocumentSigners = try object.strings("pinnedDocumentSigners")
        maxRetentionDays = try object.integer("maxRetentionDays", range: 1...Self.maxRetentionDaysLimit)
        retentionDefaults = try object.objects("retentionDefaults") { (entry: inout SettingsObject) throws(ConfigError) -> RetentionDefault in
            let shape = "{\"namespace\", \"element\", \"retention\"} is required"
            guard let namespace = try entry.nonEmptyString("namespace"), let element = try entry.nonEmptyString("element"),
                  var retention = try entry.object("retention")
            else { throw ConfigError("\(entry.path): \(shape)") }
            if namespace == "*" && element != "*" { throw ConfigError("\(entry.path): namespace \"*\" needs element \"*\"") }
            let expected = "{\"intent\": \"willNotStore\"} or {\"intent\": \"mayStore\", \"days\"?: N from 1 to \(Self.maxRetentionDaysLimit)} is required"
            let name: String?
            let days: Int?
            do {
                name = try retention.string("intent")
                days = try retention.integer("days", range: 1...Self.maxRetentionDaysLimit)
                try retention.finish()
            } catch {
                throw ConfigError("\(retention.path): \(expected)")
            }
            let intent: RetentionDefault.Intent
            switch (name, days) {
            case ("mayStore", _): intent = .mayStore(days: days)
            case ("willNotStore", nil): intent = .willNotStore
            default: throw ConfigError("\(retention.path): \(expected)")
            }
            return RetentionDefault(namespace: namespace, element: element, intent: intent)
        } ?? []
        outcomeRecipientKey = try object.nonEmptyString("outcomeRecipientKey")
        apiKeyHashes = try object.strings("apiKeys")
        let requestable = try object.objects("requestableElements") { (entry: inout SettingsObject) throws(ConfigError) in
            guard let docType = try entry.nonEmptyString("docType") else { throw ConfigError("\(entry.setting("docType")): required") }
            guard let namespace = try entry.nonEmptyString("namespace") else { throw ConfigError("\(entry.setting("namespace")): required") }
            let elements = try entry.strings("elements")
            guard !elements.isEmpty else { throw ConfigError("\(entry.setting("elements")): at least one element is required") }
            return RequestableElements(docType: docType, namespace: namespace, elements: elements)
        }
        // An empty list would read as "nothing may be asked", which no tenant means; absent is "anything".
        if requestable?.isEmpty == true {
            throw ConfigError("\(object.setting("requestableElements")): at least one entry; leave the setting out to allow any docType and element")
        }
        requestableElements = requestable ?? []
        for (index, entry) in requestableElements.enumerated() where requestableElements[..<index].contains(where: {
            $0.docType.utf8.elementsEqual(entry.docType.utf8) && $0.namespace.utf8.elementsEqual(entry.namespace.utf8)
        }) {
            throw ConfigError("\(object.setting("requestableElements"))[\(index)]: each docType and namespace once")
        }
        for hash in apiKeyHashes where !Self.isKeyHash(hash) {
            throw ConfigError("\(object.setting("apiKeys")): each entry is \"sha256:\" and 64 lowercase hex digits (`veridoc keys api-key` makes a key and its hash)")
        }
        if var tokens = try object.object("readerTokens") {
            guard let brand = try tokens.nonEmptyString("brandId") else { throw ConfigError("\(tokens.setting("brandId")): required") }
            guard let key = try tokens.nonEmptyString("keyId") else { throw ConfigError("\(tokens.setting("keyId")): required") }
            guard let file = try tokens.nonEmptyString("signingKey") else { throw ConfigError("\(tokens.setting("signingKey")): required") }
            try tokens.finish()
            readerTokens = ReaderTokens(brandID: brand, keyID: key, signingKey: file)
        }
        webReaders = try object.objectOrObjects("webReader", maxCount: Self.maxSignersPerPurpose) { (reader: inout SettingsObject) throws(ConfigError) in
            guard let certificates = try reader.nonEmptyString("certificates") else { throw ConfigError("\(reader.setting("certificates")): required") }
            guard let key = try reader.nonEmptyString("privateKey") else { throw ConfigError("\(reader.setting("privateKey")): required") }
            return WebReader(certificates: certificates, privateKey: key, setting: reader.path)
        } ?? []
        readers = try object.objects("readers") { (entry: inout SettingsObject) throws(ConfigError) -> Reader in
            guard let id = try entry.nonEmptyString("id"), id.utf8.count <= Self.maxIDLength else {
                throw ConfigError("\(entry.setting("id")): a non-empty string of at most \(Self.maxIDLength) bytes is required")
            }
            guard let key = try entry.nonEmptyString("publicKey") else { throw ConfigError("\(entry.setting("publicKey")): required") }
            return Reader(id: id, publicKey: key)
        } ?? []
        if let index = readers.indices.first(where: { index in readers[..<index].contains { $0.id.utf8.elementsEqual(readers[index].id.utf8) } }) {
            throw ConfigError("\(object.setting("readers"))[\(index)].id: duplicate reader id")
        }
        acceptOpenID4VPTranscripts = try object.bool("acceptOpenID4VPTranscripts") ?? true
        acceptUnencryptedOpenID4VP = try object.bool("acceptUnencryptedOpenID4VP") ?? false
        openID4VPUnsignedRequests = try object.bool("openID4VPUnsignedRequests") ?? false
        if try object.array("digitalCredentialsProtocols") != nil {
            let setting = object.setting("digitalCredentialsProtocols")
            let names = try object.strings("digitalCredentialsProtocols")
            let protocols = names.compactMap(DigitalCredentialsProtocol.init(rawValue:))
            guard protocols.count == names.count, Set(protocols).count == protocols.count, protocols.contains(.orgISOMdoc) else {
                throw ConfigError("\(setting): org-iso-mdoc and optionally openid4vp, each once, in the order web sessions offer them")
            }
            digitalCredentialsProtocols = protocols
        }
        openID4VPVerifiers = try object.objectOrObjects("openID4VPVerifier", maxCount: Self.maxSignersPerPurpose) {
            (verifier: inout SettingsObject) throws(ConfigError) in
            guard let certificates = try verifier.nonEmptyString("certificates") else { throw ConfigError("\(verifier.setting("certificates")): required") }
            guard let key = try verifier.nonEmptyString("privateKey") else { throw ConfigError("\(verifier.setting("privateKey")): required") }
            let prefixName = try verifier.nonEmptyString("clientIdPrefix") ?? OpenID4VPVerifier.ClientIDPrefix.x509SanDNS.rawValue
            guard let prefix = OpenID4VPVerifier.ClientIDPrefix(rawValue: prefixName) else {
                throw ConfigError("\(verifier.setting("clientIdPrefix")): one of \(OpenID4VPVerifier.ClientIDPrefix.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return OpenID4VPVerifier(certificates: certificates, privateKey: key, clientIDPrefix: prefix, setting: verifier.path)
        } ?? []
        if var policy = try object.object("status") {
            status = try Self.statusPolicy(&policy)
        }
        webhooks = try object.objects("webhooks", Self.webhook) ?? []
        if let index = webhooks.indices.first(where: { index in webhooks[..<index].contains { $0.id == webhooks[index].id } }) {
            throw ConfigError("\(object.setting("webhooks"))[\(index)].id: each endpoint id once in a tenant")
        }
        if var test = try object.object("testConditions") {
            testConditions = try Self.testConditions(&test, tenant: self)
        }
    }

    private static func webhook(_ entry: inout SettingsObject) throws(ConfigError) -> Webhook {
        guard let id = try entry.nonEmptyString("id"), id.utf8.count <= Webhook.maxIDLength,
              id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || $0 == 0x5f || $0 == 0x2d })
        else { throw ConfigError("\(entry.setting("id")): 1 to \(Webhook.maxIDLength) letters, digits, _ or - is required") }
        guard let url = try entry.nonEmptyString("url") else { throw ConfigError("\(entry.setting("url")): required") }
        let events = try entry.array("events") == nil ? Webhook.eventTypes : try entry.strings("events")
        guard !events.isEmpty, Set(events).count == events.count, events.allSatisfy(Webhook.eventTypes.contains) else {
            throw ConfigError("\(entry.setting("events")): distinct event types from \(Webhook.eventTypes.joined(separator: ", "))")
        }
        let secrets = try entry.strings("secrets")
        let signingKeys = try entry.stringOrStrings("signingKey", maxCount: Webhook.maxSecrets)
        guard secrets.count <= Webhook.maxSecrets, !secrets.isEmpty || !signingKeys.isEmpty else {
            throw ConfigError("\(entry.setting("secrets")): 1 to \(Webhook.maxSecrets) secret files (`veridoc keys generate-webhook-secret`), or a signingKey, is required")
        }
        let concurrency = try entry.integer("maxConcurrency", range: 1...64) ?? 4
        let rate = try entry.integer("maxPerSecond", range: 1...10_000) ?? 50
        return Webhook(id: id, url: url, events: events, secrets: secrets, signingKeys: signingKeys, maxConcurrency: concurrency,
                       maxPerSecond: rate, setting: entry.path)
    }

    private static func statusPolicy(_ policy: inout SettingsObject) throws(ConfigError) -> StatusPolicy {
        var read = StatusPolicy()
        if let name = try policy.string("mode") {
            guard let mode = StatusPolicy.Mode(rawValue: name) else {
                let known = StatusPolicy.Mode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw ConfigError("\(policy.setting("mode")): one of \(known)")
            }
            read.mode = mode
        }
        read.maxWaitSeconds = try policy.integer("maxWaitSeconds", range: 1...StatusPolicy.maxWaitSecondsLimit) ?? read.maxWaitSeconds
        read.recheckAfterAcceptance = try policy.bool("recheckAfterAcceptance") ?? read.recheckAfterAcceptance
        try policy.finish()
        return read
    }

    /// `testConditions`, refused beside production trust: a test tenant is a tenant of its own.
    private static func testConditions(_ test: inout SettingsObject, tenant: TenantSettings) throws(ConfigError) -> TestConditions {
        let names = try test.strings("kinds")
        let kinds = names.compactMap(TestConditions.Kind.init(rawValue:))
        let known = TestConditions.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard !kinds.isEmpty, kinds.count == names.count, Set(kinds).count == kinds.count else {
            throw ConfigError("\(test.setting("kinds")): a non-empty array of distinct kinds from \(known) is required")
        }
        let anchors = try test.strings("trustAnchors")
        try test.finish()
        guard tenant.trustAnchors.isEmpty && tenant.vicals.isEmpty && tenant.pinnedDocumentSigners.isEmpty else {
            throw ConfigError("\(test.path): a test tenant cannot have production trust (trustAnchors, vicals, pinnedDocumentSigners): "
                + "put test roots in \(test.setting("trustAnchors")) and production in a tenant of its own")
        }
        if kinds.contains(.simulator), tenant.teamID != TestConditions.simulatorTeamID {
            throw ConfigError("\(test.setting("kinds")): \"simulator\" needs teamId \"\(TestConditions.simulatorTeamID)\", the Team ID of the Simulator's session transcript")
        }
        return TestConditions(kinds: kinds, trustAnchors: anchors)
    }

    static func isKeyHash(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let prefix = Array("sha256:".utf8)
        guard bytes.count == prefix.count + 64, bytes.starts(with: prefix) else { return false }
        return bytes.dropFirst(prefix.count).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
