/// One entry of `tenants`, as written: paths are not yet read (Verification
/// loads the keys and certificates they name).
public struct TenantSettings: Sendable, Equatable {
    public struct VICAL: Sendable, Equatable {
        public var file: String
        public var anchors: [String]
    }

    /// A `retentionDefaults` entry: the shape of a request's `requestedElements`.
    public struct RetentionDefault: Sendable, Equatable {
        public var namespace: String
        public var element: String
        public var intent: String
        public var days: Int?
    }

    public var path: String
    public var id: String
    public var merchantIDs: [String]
    public var teamID: String?
    public var encryptionKeys: [String]
    public var trustAnchors: [String]
    public var origins: [String]
    public var maxRequestAgeSeconds: Int?
    public var vicals: [VICAL]
    public var pinnedDocumentSigners: [String]
    public var maxRetentionDays: Int?
    public var retentionDefaults: [RetentionDefault]
    public var outcomeRecipientKey: String?

    /// The longest tenant id: ids are keys of every stored row.
    public static let maxIDLength = 256
    /// The longest retention a setting may name (about 2,700 years: effectively unbounded, but finite).
    public static let maxRetentionDaysLimit = 1_000_000

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
        maxRequestAgeSeconds = try object.integer("maxRequestAgeSeconds", range: 1...Int(Int32.max))
        vicals = try object.objects("vicals") { (vical: inout SettingsObject) throws(ConfigError) -> VICAL in
            guard let file = try vical.nonEmptyString("file") else { throw ConfigError("\(vical.setting("file")): required") }
            let anchors = try vical.strings("anchors")
            guard !anchors.isEmpty else { throw ConfigError("\(vical.setting("anchors")): at least one anchor is required") }
            return VICAL(file: file, anchors: anchors)
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
            let intent: String?
            let days: Int?
            do {
                intent = try retention.string("intent")
                days = try retention.integer("days", range: 1...Self.maxRetentionDaysLimit)
                try retention.finish()
            } catch {
                throw ConfigError("\(retention.path): \(expected)")
            }
            guard let intent, intent == "mayStore" || (intent == "willNotStore" && days == nil) else {
                throw ConfigError("\(retention.path): \(expected)")
            }
            return RetentionDefault(namespace: namespace, element: element, intent: intent, days: days)
        } ?? []
        outcomeRecipientKey = try object.nonEmptyString("outcomeRecipientKey")
    }
}
