import Synchronization

/// Signatures that verified, remembered so that the same credential shown
/// again (an MSO lives for months, and a person proves their age to the same
/// business again and again) costs a hash instead of an ECDSA verification.
///
/// An entry is the SHA-256 of (digest, signature, the key's point), each
/// length-prefixed: ECDSA verification is a function of exactly those three,
/// so a remembered entry answers as the verification did, and finding one
/// for other inputs would take a SHA-256 collision. Only successes are
/// remembered: a failure costs the failing input its own verification, and
/// hostile input cannot fill the memo with it. Callers remember signatures
/// under keys they already trust only (see `TrustedSignatures`), so that a
/// stream of self-signed credentials cannot push real ones out.
///
/// Bounded: `capacity` entries of 32 bytes, in a set and a ring that evicts
/// the oldest first (about 80 bytes an entry with the set's overhead); a
/// capacity of 0 remembers nothing (`worker.signatureMemoEntries`).
public final class VerifiedSignatureMemo: Sendable {
    /// 65,536 entries, about 5 MB.
    public static let defaultCapacity = 65_536
    /// The memory an entry takes, set and ring together, to count in the RSS budget.
    public static let approximateBytesPerEntry = 80

    private let state: Mutex<State>

    private struct State {
        var entries: Set<Fingerprint> = []
        var ring: [Fingerprint?]
        var next = 0
        var counters = Statistics()

        init(capacity: Int) {
            ring = Array(repeating: nil, count: capacity)
            entries.reserveCapacity(capacity)
        }
    }

    /// What the memo holds and has done, for metrics and tests.
    public struct Statistics: Sendable, Equatable {
        public var entries = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
    }

    public init(capacity: Int = defaultCapacity) {
        precondition(capacity >= 0)
        state = Mutex(State(capacity: capacity))
    }

    public var capacity: Int { state.withLock { $0.ring.count } }

    /// Forgets every entry and keeps at most `capacity` from now on (0: none).
    public func reset(capacity: Int) {
        precondition(capacity >= 0)
        state.withLock { $0 = State(capacity: capacity) }
    }

    /// The memo's entry for a verification of `signature` over `digest` by the key whose point is `point`.
    public struct Entry: Sendable {
        let fingerprint: Fingerprint

        public init(digest: [UInt8], signature: [UInt8], point: [UInt8]) {
            var input: [UInt8] = []
            input.reserveCapacity(12 + digest.count + signature.count + point.count)
            for part in [digest, signature, point] {
                let count = UInt32(part.count)
                input += [UInt8(count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)]
                input += part
            }
            fingerprint = Fingerprint(HashAlgorithm.sha256.hash(input))
        }
    }

    /// Whether `entry` verified before (counted as a hit or a miss).
    public func contains(_ entry: Entry) -> Bool {
        state.withLock { state in
            let found = state.entries.contains(entry.fingerprint)
            if found { state.counters.hits += 1 } else { state.counters.misses += 1 }
            return found
        }
    }

    /// Remembers a verification that succeeded.
    public func remember(_ entry: Entry) {
        state.withLock { state in
            guard !state.ring.isEmpty, state.entries.insert(entry.fingerprint).inserted else { return }
            if let oldest = state.ring[state.next] {
                state.entries.remove(oldest)
                state.counters.evictions += 1
            }
            state.ring[state.next] = entry.fingerprint
            state.next = (state.next + 1) % state.ring.count
        }
    }

    public var statistics: Statistics {
        state.withLock { state in
            var copy = state.counters
            copy.entries = state.entries.count
            return copy
        }
    }
}
