import Postgres
import Verification

/// Runs a command body and maps what it threw to the exit status: 0 on
/// success, 2 for usage and configuration errors (message on stderr), 1
/// otherwise.
public enum ExitStatus {
    public static func of(usage: String, _ body: () throws -> Void) -> Int32 {
        do {
            try body()
            return 0
        } catch let error as UsageError {
            Console.error("\(error.message)\n\n\(usage)")
        } catch let error as ConfigError {
            Console.error("config: \(error.message)")
        } catch let error as PostgresError {
            Console.error("postgres: \(error.sqlState ?? "connection") \(error.message)")
            return 1
        } catch {
            Console.error("\(error)")
            return 1
        }
        return 2
    }
}
