/// The `kafka` section.
public struct KafkaSettings: Sendable, Equatable {
    /// Required by the worker (`VERIDOC_KAFKA_BOOTSTRAP_SERVERS`); nil when neither sets it.
    public var bootstrapServers: String?
    public var groupID = "veridoc"
    public var requestTopic = "veridoc.requests"
    public var outcomeTopic = "veridoc.outcomes"
    public var deadLetterTopic = "veridoc.requests.dlq"
    /// Passed to librdkafka verbatim (SASL, TLS, tuning); `VERIDOC_KAFKA_PROPERTY_SASL_USERNAME=…` sets `sasl.username`.
    public var properties: [String: String] = [:]
    /// What to do where the broker no longer has a partition's records.
    public var offsetGapPolicy = GapPolicy.skip

    /// `skip` or `stop` (Pipeline's `OffsetGapPolicy` says what each does).
    public enum GapPolicy: String, Sendable, Equatable, CaseIterable {
        case skip, stop
    }

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let bootstrapServersFromFile = try section?.string("bootstrapServers")
        bootstrapServers = environment["VERIDOC_KAFKA_BOOTSTRAP_SERVERS"] ?? bootstrapServersFromFile
        let groupIDFromFile = try section?.string("groupId")
        groupID = environment["VERIDOC_KAFKA_GROUP_ID"] ?? groupIDFromFile ?? groupID
        let requestTopicFromFile = try section?.string("requestTopic")
        requestTopic = environment["VERIDOC_KAFKA_REQUEST_TOPIC"] ?? requestTopicFromFile ?? requestTopic
        let outcomeTopicFromFile = try section?.string("outcomeTopic")
        outcomeTopic = environment["VERIDOC_KAFKA_OUTCOME_TOPIC"] ?? outcomeTopicFromFile ?? outcomeTopic
        let deadLetterTopicFromFile = try section?.string("deadLetterTopic")
        deadLetterTopic = environment["VERIDOC_KAFKA_DEAD_LETTER_TOPIC"] ?? deadLetterTopicFromFile ?? deadLetterTopic
        let offsetGapPolicyFromFile = try section?.string("offsetGapPolicy")
        if let name = environment["VERIDOC_KAFKA_OFFSET_GAP_POLICY"] ?? offsetGapPolicyFromFile {
            guard let policy = GapPolicy(rawValue: name) else {
                throw ConfigError("kafka.offsetGapPolicy: \(name) is not one of \(GapPolicy.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            offsetGapPolicy = policy
        }
        if let object = try section?.object("properties") {
            for member in object.object.members {
                let setting = object.setting(member.key)
                switch member.value {
                case .string(let text): properties[member.key] = text
                case .bool(let flag): properties[member.key] = flag ? "true" : "false"
                case .number(let number): properties[member.key] = number.description
                default: throw ConfigError("\(setting): a string, number or boolean is required")
                }
            }
        }
        let prefix = "VERIDOC_KAFKA_PROPERTY_"
        for (name, value) in environment.variables where name.hasPrefix(prefix) {
            properties[name.dropFirst(prefix.count).lowercased().replacingOccurrences(of: "_", with: ".")] = value
        }
        try section?.finish()
    }
}
