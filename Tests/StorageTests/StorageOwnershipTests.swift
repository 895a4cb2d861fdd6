import Foundation
import Storage
import Testing
import TestSupport

/// The schema is owned where it is defined: no product module but Storage
/// names a table or view of the migrations in SQL. The developer tooling
/// (demo, benchmarks, chaos) may read the tables: it checks the product from
/// outside, and must not do so through the product's own queries.
struct StorageOwnershipTests {
    static let tooling: Set<String> = ["Storage", "DemoKit", "Benchmarks", "Chaos", "VeridocDev", "TestIssuer"]

    /// Every table and view the migrations create, and the table that records them.
    static let relations: [String] = {
        let pattern = try! Regex(#"CREATE (?:TABLE|VIEW) (?:IF NOT EXISTS )?([a-z_]+)"#)
        var names: Set<String> = ["schema_migrations"]
        for migration in Migrations.all {
            for match in migration.sql.matches(of: pattern) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names.sorted()
    }()

    /// SQL that names `relation`: FROM, JOIN, INTO, UPDATE or TABLE before it.
    static func names(_ relation: String, in line: Substring) -> Bool {
        guard line.contains(relation) else { return false }
        return line.contains(try! Regex(#"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+"# + relation + #"\b"#))
    }

    @Test func theMigrationsCreateTheTablesTheProductUses() {
        for table in ["results", "element_groups", "element_values", "nonces", "outbox", "consumer_positions", "consumer_gaps", "elements"] {
            #expect(Self.relations.contains(table), "\(table)")
        }
    }

    /// A statement in a string literal: SQL whatever it names (a function,
    /// the catalog), which belongs in Storage (or, for the driver's own, Postgres).
    static func startsStatement(_ line: Substring) -> Bool {
        line.contains(try! Regex(#""(SELECT|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM|CREATE|ALTER|DROP|TRUNCATE)\b"#))
    }

    @Test func noProductModuleOutsideStorageWritesSQLAgainstTheSchema() throws {
        let sources = Binaries.repository.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !Self.tooling.contains($0) }
        #expect(modules.contains("Pipeline") && modules.contains("Retention"))
        var offenders: [String] = []
        for module in modules {
            let folder = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    for relation in Self.relations where Self.names(relation, in: line) {
                        offenders.append("\(module)/\(file): \(relation)")
                    }
                    if module != "Postgres" && Self.startsStatement(line) { offenders.append("\(module)/\(file): \(line)") }
                }
            }
        }
        #expect(offenders.isEmpty, "SQL against the schema outside Storage: \(offenders)")
    }

    @Test func theCheckRecognisesSQL() {
        #expect(Self.names("outbox", in: #"try connection.execute("DELETE FROM outbox WHERE id = $1")"#))
        #expect(Self.names("results", in: "UPDATE results SET verdict = $2"))
        #expect(!Self.names("results", in: "let results = try store.write(batch)"))
        #expect(Self.startsStatement(#"let probe = PostgresStatement("SELECT 1")"#))
        #expect(Self.startsStatement(#"try connection.execute("SELECT pg_advisory_lock($1)", [.int(key)])"#))
        #expect(!Self.startsStatement(#"log.info("select a tenant")"#))
    }
}
