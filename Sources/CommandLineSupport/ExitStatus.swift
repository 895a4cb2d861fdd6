import Kafka
import Postgres
import Storage
import Verification

/// Runs a command body and maps what it threw to the exit status: 0 on
/// success, 2 for usage and configuration errors and for a database whose
/// schema is newer than this binary (message on stderr), 1 otherwise.
public enum ExitStatus {
    /// What the statuses mean; each command's `--help` lists its own with
    /// these (and DocsMatchCodeTests holds the documents to that help).
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usageOrConfiguration: Int32 = 2

    public static func of(usage: String, _ body: () throws -> Void) -> Int32 {
        returning(usage: usage) {
            try body()
            return success
        }
    }

    /// As `of`, for a body that decides its own status (a run whose verdict is
    /// 1, say); any other error is reported after `failure` ("bench failed").
    public static func returning(usage: String, failure: String? = nil, _ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch let error as UsageError {
            Console.error(error.report(otherwise: usage))
        } catch let error as ConfigError {
            Console.error("config: \(error.message)")
        } catch let error as KafkaError where error.configurationProblem != nil {
            Console.error("config: kafka.properties: \(error.configurationProblem ?? "")")
        } catch let error as SchemaError {
            // Restarting will not help: the binary has to change (or the database).
            Console.error("postgres: \(error)")
        } catch let error as PostgresError {
            Console.error("postgres: \(error.sqlState ?? "connection") \(error.message)")
            return Self.failure
        } catch {
            Console.error(failure.map { "\($0): \(error)" } ?? "\(error)")
            return Self.failure
        }
        return usageOrConfiguration
    }
}
