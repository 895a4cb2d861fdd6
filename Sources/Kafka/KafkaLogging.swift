import CRdKafka
import Synchronization

/// Where librdkafka's own log lines go. Without a route, librdkafka writes
/// them to stderr in its own format (`%3|…|FAIL|rdkafka#producer-1|…`); a
/// program whose stderr is one JSON object per line routes them through its
/// logger instead. Clients made after `route` use it: set it before the
/// first producer or consumer.
public enum KafkaLogging {
    /// One line as librdkafka gave it: its syslog level (0 emergency … 7
    /// debug), facility (`FAIL`, `REQTMOUT`, …), the client's name and the
    /// text. librdkafka's lines name brokers, topics and partitions, never a
    /// message's payload.
    public struct Line: Sendable {
        public let level: Int32
        public let facility: String
        public let client: String
        public let text: String
    }

    public typealias Handler = @Sendable (Line) -> Void

    private static let handler = Mutex<Handler?>(nil)

    public static func route(_ handler: @escaping Handler) {
        self.handler.withLock { $0 = handler }
    }

    /// Installs the route on a configuration about to become a client.
    static func install(on conf: OpaquePointer) {
        guard handler.withLock({ $0 }) != nil else { return }
        rd_kafka_conf_set_log_cb(conf) { rk, level, facility, text in
            let client = rk.map { String(cString: rd_kafka_name($0)) } ?? ""
            let line = Line(level: level, facility: facility.map { String(cString: $0) } ?? "", client: client, text: text.map { String(cString: $0) } ?? "")
            KafkaLogging.handler.withLock { $0 }?(line)
        }
    }
}
