@testable import Postgres
import Testing

/// The cache's rules without a server: what is prepared, when it counts as
/// prepared, the bound, and what clears it.
@Suite struct PreparedStatementCacheTests {
    static func name(_ plan: PreparedStatementCache.Plan) -> String? {
        switch plan {
        case .unnamed: nil
        case .prepared(let name): name
        case .prepare(_, let name): name
        }
    }

    static func isPrepare(_ plan: PreparedStatementCache.Plan) -> Bool {
        if case .prepare = plan { return true }
        return false
    }

    @Test func onlyStatementsWithParametersAreCachedAndOnlyOnceConfirmed() {
        var cache = PreparedStatementCache(enabled: true)
        #expect(Self.name(cache.plan(sql: "BEGIN", types: [])) == nil)

        let first = cache.plan(sql: "INSERT $1", types: [20])
        #expect(Self.isPrepare(first) && Self.name(first) == "vd_1")
        // Later in the same pipeline: executed by the name whose Prepare is on its way.
        #expect(Self.name(cache.plan(sql: "INSERT $1", types: [20])) == "vd_1")
        #expect(!Self.isPrepare(cache.plan(sql: "INSERT $1", types: [20])))
        // Never confirmed (skipped after a failure): prepared again, under a new name.
        cache.settle(after: PostgresError(kind: .server, sqlState: "23505", message: "duplicate"))
        let again = cache.plan(sql: "INSERT $1", types: [20])
        #expect(Self.isPrepare(again) && Self.name(again) == "vd_2")
        if case .prepare(let key, _) = again { cache.confirm(key) }
        cache.settle(after: nil)
        #expect(cache.count == 1)
        let reused = cache.plan(sql: "INSERT $1", types: [20])
        #expect(!Self.isPrepare(reused) && Self.name(reused) == "vd_2")

        // Another type vector is another statement.
        #expect(Self.isPrepare(cache.plan(sql: "INSERT $1", types: [0])))
    }

    @Test func aMissingStatementForgetsAllAndNamesAreNotReused() {
        var cache = PreparedStatementCache(enabled: true)
        for sql in ["a $1", "b $1"] {
            if case .prepare(let key, _) = cache.plan(sql: sql, types: [25]) { cache.confirm(key) }
        }
        #expect(cache.count == 2)
        cache.settle(after: PostgresError(kind: .server, sqlState: "22012", message: "division by zero"))
        #expect(cache.count == 2)
        cache.settle(after: PostgresError(kind: .server, sqlState: "26000", message: "prepared statement does not exist"))
        #expect(cache.count == 0)
        #expect(Self.name(cache.plan(sql: "a $1", types: [25])) == "vd_3")
        cache.clear()
        #expect(Self.name(cache.plan(sql: "a $1", types: [25])) == "vd_4")
    }

    @Test func theCacheStopsTakingStatementsAtItsBound() {
        var cache = PreparedStatementCache(enabled: true)
        for number in 0..<PreparedStatementCache.capacity {
            guard case .prepare(let key, _) = cache.plan(sql: "SELECT \(number) + $1", types: [20]) else {
                Issue.record("statement \(number) not taken")
                return
            }
            cache.confirm(key)
        }
        #expect(Self.name(cache.plan(sql: "SELECT -1 + $1", types: [20])) == nil)
        // What it holds is still used.
        #expect(Self.name(cache.plan(sql: "SELECT 0 + $1", types: [20])) == "vd_1")
        #expect(cache.count == PreparedStatementCache.capacity)
    }

    @Test func optedOutEverythingGoesUnnamed() {
        var cache = PreparedStatementCache(enabled: false)
        #expect(Self.name(cache.plan(sql: "INSERT $1", types: [20])) == nil)
        #expect(cache.count == 0)
    }
}
