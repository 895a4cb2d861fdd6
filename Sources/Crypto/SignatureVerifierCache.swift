import Foundation

/// Fixed-base tables (`PrecomputedVerificationKey`) for the P-256 keys that
/// verify often: the few document signers behind every credential of an
/// issuer. A key's table is built on its `threshold`-th sighting, so only keys
/// that will likely repay the build get one (see `defaultThreshold`). Below
/// that, and for every other key type, verification is the ordinary
/// `PublicKey.isValidSignature(_:for:hash:)`.
///
/// Bounded: at most `capacity` tables (each `PrecomputedVerificationKey
/// .approximateByteCount`, about 150 KB; count `byteCount` in the RSS budget),
/// the least recently used evicted first; an evicted key counts from zero
/// again, so keys that take turns cost at most one build per `threshold`
/// verifies. Sightings of keys without a table are counted for at most
/// `trackedKeyLimit` keys; when full the counts start over.
///
/// Thread-safe: one lock guards the bookkeeping; builds and verifications run
/// outside it (a table is immutable and shared, see its type), and a key's
/// table is built by one thread while the others keep the ordinary path.
public final class SignatureVerifierCache: @unchecked Sendable {
    public static let shared = SignatureVerifierCache()

    /// Sightings before a key gets its table. A build costs as much as
    /// several hundred verifications through the table save (the figures are
    /// in bench/results/history.md); a key seen 1,000 times is likely to be
    /// seen that many more.
    public static let defaultThreshold = 1_000
    /// Tables kept: 16 document signers in about 2.5 MB.
    public static let defaultCapacity = 16
    /// Keys without a table whose sightings are counted (about 100 bytes each).
    public static let defaultTrackedKeyLimit = 1_024

    public let threshold: Int
    public let capacity: Int
    public let trackedKeyLimit: Int

    private struct Entry {
        let table: PrecomputedVerificationKey
        var lastUse: UInt64
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    private var tables: [Fingerprint: Entry] = [:]
    private var sightings: [Fingerprint: Int] = [:]
    private var building: Set<Fingerprint> = []
    private var clock: UInt64 = 0
    private var counters = Statistics()

    /// `threshold` ≥ 1 (1 builds on first sight); `capacity` 0 never builds.
    public init(threshold: Int = defaultThreshold, capacity: Int = defaultCapacity, trackedKeyLimit: Int = defaultTrackedKeyLimit) {
        precondition(threshold >= 1 && capacity >= 0 && trackedKeyLimit >= 1)
        self.threshold = threshold
        self.capacity = capacity
        self.trackedKeyLimit = trackedKeyLimit
    }

    /// `key.isValidSignature(signature, for: data, hash: hash)`, through the
    /// key's table when it has one. P-384, P-521 and Ed25519 keys, and P-256
    /// keys not yet seen `threshold` times, take the ordinary path.
    public func isValidSignature(_ signature: [UInt8], for data: some Collection<UInt8>, hash: HashAlgorithm, key: PublicKey) -> Bool {
        guard key.curve == .p256 else { return key.isValidSignature(signature, for: data, hash: hash) }
        return isValidSignature(signature, digest: hash.hash(data), key: key)
    }

    /// The same for an EC key and a digest already taken (false for other key types).
    public func isValidSignature(_ signature: [UInt8], digest: [UInt8], key: PublicKey) -> Bool {
        if key.curve == .p256, let table = table(for: key) { return table.isValidSignature(signature, digest: digest) }
        return key.isValidSignature(signature, digest: digest)
    }

    /// What the cache holds and has done, for metrics and tests.
    public struct Statistics: Sendable, Equatable {
        public var tables = 0
        public var trackedKeys = 0
        public var builds = 0
        public var buildFailures = 0
        public var evictions = 0
        /// Memory held by the tables, to count in the RSS budget.
        public var byteCount: Int { tables * PrecomputedVerificationKey.approximateByteCount }
    }

    public var statistics: Statistics {
        lock.lock()
        defer { lock.unlock() }
        var copy = counters
        copy.tables = tables.count
        copy.trackedKeys = sightings.count
        return copy
    }

    /// The key's table: the one kept, one built now on its `threshold`-th
    /// sighting, or nil.
    func table(for key: PublicKey) -> PrecomputedVerificationKey? {
        guard capacity > 0, let point = key.uncompressedPoint else { return nil }
        let fingerprint = Fingerprint(HashAlgorithm.sha256.hash(point))
        switch decide(fingerprint) {
        case .use(let table): return table
        case .ordinary: return nil
        case .build:
            let built = try? PrecomputedVerificationKey(key)
            store(built, for: fingerprint)
            return built
        }
    }

    private enum Decision {
        case use(PrecomputedVerificationKey)
        case build
        case ordinary
    }

    /// One sighting: the kept table, or the count taken one further, and
    /// whether this caller is the one to build the table.
    private func decide(_ fingerprint: Fingerprint) -> Decision {
        lock.lock()
        defer { lock.unlock() }
        if var entry = tables[fingerprint] {
            clock += 1
            entry.lastUse = clock
            tables[fingerprint] = entry
            return .use(entry.table)
        }
        // Another thread is building it; this verification does not wait.
        guard !building.contains(fingerprint) else { return .ordinary }
        let seen = (sightings[fingerprint] ?? 0) + 1
        guard seen >= threshold else {
            if seen == 1, sightings.count >= trackedKeyLimit { sightings.removeAll(keepingCapacity: true) }
            sightings[fingerprint] = seen
            return .ordinary
        }
        sightings[fingerprint] = nil
        building.insert(fingerprint)
        return .build
    }

    private func store(_ built: PrecomputedVerificationKey?, for fingerprint: Fingerprint) {
        // Freed after the lock is released, when the last verification using it ends.
        var evicted: PrecomputedVerificationKey?
        lock.lock()
        defer {
            lock.unlock()
            withExtendedLifetime(evicted) {}
        }
        building.remove(fingerprint)
        guard let built else {
            // Counts again from zero, so a key that cannot have a table costs
            // one failed build per `threshold` sightings at most.
            counters.buildFailures += 1
            return
        }
        if tables.count >= capacity, let oldest = tables.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            evicted = tables.removeValue(forKey: oldest.key)?.table
            counters.evictions += 1
        }
        clock += 1
        tables[fingerprint] = Entry(table: built, lastUse: clock)
        counters.builds += 1
    }
}
