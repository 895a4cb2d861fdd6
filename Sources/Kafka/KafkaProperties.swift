import CRdKafka

/// librdkafka properties passed verbatim (so SASL/TLS work as librdkafka documents them).
public typealias KafkaProperties = [String: String]

/// Builds an `rd_kafka_conf_t` from defaults overridden by the caller's
/// properties, and creates the client handle from it.
package enum KafkaConfiguration {
    /// Returns an owned `rd_kafka_t`. `configure` runs on the conf before the
    /// handle is created (callbacks, opaque).
    package static func makeHandle(
        _ type: rd_kafka_type_t, defaults: KafkaProperties, properties: KafkaProperties,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        // Caller's properties win; applied in a stable order for reproducible errors.
        let merged = defaults.merging(properties) { _, caller in caller }
        for (name, value) in merged.sorted(by: { $0.key < $1.key }) {
            if rd_kafka_conf_set(conf, name, value, &errorText, errorText.count) != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                var error = KafkaError(code: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue, message: "property \(name): \(redacted(name, text(errorText)))", isRetriable: false)
                error.configurationProblem = "librdkafka refuses the property \(name): \(redacted(name, text(errorText)))"
                throw error
            }
        }
        KafkaLogging.install(on: conf)
        configure(conf)
        // On success rd_kafka_new owns conf; on failure it is still ours.
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            var error = KafkaError(code: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue, message: "cannot create client: \(text(errorText))", isRetriable: false)
            // librdkafka's text names the property ("ssl.ca.location failed: …").
            error.configurationProblem = "librdkafka cannot start a client with these properties: \(text(errorText))"
            throw error
        }
        return handle
    }

    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// librdkafka quotes the rejected value in its message; for secrets
    /// (passwords, keys, tokens) that text must not reach a log.
    private static func redacted(_ name: String, _ text: String) -> String {
        let secret = ["password", "secret", "key", "jaas", "token", "credential"].contains { name.lowercased().contains($0) }
        return secret ? "invalid value (not shown)" : text
    }
}
