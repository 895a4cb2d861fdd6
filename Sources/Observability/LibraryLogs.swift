import Kafka
import Postgres

extension Logger {
    /// Sends librdkafka's log lines through this logger, one JSON object per
    /// line like every other: message `librdkafka`, the syslog level mapped
    /// (0–3 error, 4 warning, 5–6 info, 7 debug), with facility, client and
    /// librdkafka's text as fields.
    public func routeLibrdkafka() {
        let log = self
        KafkaLogging.route { line in
            let fields = ["facility": line.facility, "client": line.client, "text": line.text]
            switch line.level {
            case ...3: log.error("librdkafka", fields)
            case 4: log.warning("librdkafka", fields)
            case 5, 6: log.info("librdkafka", fields)
            default: log.debug("librdkafka", fields)
            }
        }
    }

    /// Sends the server's notices through this logger: severity and SQLSTATE
    /// only (`PostgresNotices` keeps their text out, since it can carry values).
    public func routePostgresNotices() {
        let log = self
        PostgresNotices.route { notice in
            let fields = ["severity": notice.severity, "sqlState": notice.sqlState]
            notice.severity == "WARNING" ? log.warning("postgres notice", fields) : log.debug("postgres notice", fields)
        }
    }

    /// Both of the above: what a process whose stderr is JSON lines calls first.
    public func routeLibraryLogs() {
        routeLibrdkafka()
        routePostgresNotices()
    }
}
