import Postgres

/// The cheapest round trip that proves the server answers (readiness).
public enum HealthProbe {
    public static let statement = PostgresStatement("SELECT 1")
}
