import Foundation
import PushCore

/// What the device registry says about a token named directly in a notification.
struct TokenRegistryState: Sendable, Equatable {
    /// Registered in the APNs sandbox environment.
    var sandbox = false
    /// `devices.invalidated_at` is set: the provider said the token is dead
    /// (or the app unregistered it) and no registration since revived it.
    var invalid = false

    /// A token the registry does not know: valid, production.
    static let unknown = TokenRegistryState()
}

/// A worker's short-lived copy of `TokenRegistryState` per token, so that a
/// campaign's repeated tokens are asked about once per `ttl`, never once per
/// recipient. Entries the worker itself changes (an invalidation it wrote, a
/// registration it applied) are dropped at once; other replicas' changes are
/// seen within `ttl`.
///
/// Entries are keyed by 128 bits of hash of (app, platform, token), not by
/// the token's strings: an entry is 40 bytes instead of holding a 64- to
/// 200-character token alive (tens of MB at the 200,000-entry capacity, and
/// a string comparison on every look-up). Two tokens share a key with a
/// probability of about 2⁻¹²⁸ per pair.
final class TokenRegistryCache: Sendable {
    /// The cache's key for one token: two differently seeded hashes of it
    /// (this process's `Hasher` seed, so keys never outlive the process).
    struct Key: Hashable, Sendable {
        let first: Int
        let second: Int

        init(_ token: AppToken) {
            var a = Hasher(), b = Hasher()
            a.combine(UInt8(0))
            b.combine(UInt8(1))
            a.combine(token)
            b.combine(token)
            first = a.finalize()
            second = b.finalize()
        }
    }

    /// 16 bytes: the expiry as nanoseconds from the cache's creation (`tick`), not a
    /// 16-byte `ContinuousClock.Instant` beside the 2-byte state.
    private struct Entry: Sendable {
        var expires: Int64
        var state: TokenRegistryState
    }

    let ttl: Duration
    let capacity: Int
    /// Room for `capacity` entries from the start: filling a growing dictionary
    /// rehashes every entry at each doubling (9 % of the worker's task pool in a
    /// campaign of new tokens, `docs/benchmarks.md`). Untouched pages of the table
    /// cost no memory; a full one is about 16 MB at 200,000 entries.
    private let entries: Locked<[Key: Entry]>
    private let origin = ContinuousClock.now
    private let ttlTicks: Int64

    init(ttl: Duration, capacity: Int = 200_000) {
        self.ttl = ttl
        self.capacity = max(1, capacity)
        self.ttlTicks = Self.nanoseconds(ttl)
        self.entries = Locked([Key: Entry](minimumCapacity: ttl > .zero ? self.capacity : 0))
    }

    /// Whole nanoseconds of `duration`, saturated at ±292 years: durations and
    /// instants here come from the continuous clock, so there is nothing finer.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }

    private func tick(_ instant: ContinuousClock.Instant) -> Int64 { Self.nanoseconds(instant - origin) }

    /// The fresh states among `tokens`, and the tokens to ask the registry
    /// about, each with its key for `remember`.
    func split(_ tokens: Set<AppToken>, now: ContinuousClock.Instant = .now)
        -> (known: [AppToken: TokenRegistryState], missing: [(token: AppToken, key: Key)])
    {
        let keyed = tokens.map { (token: $0, key: Key($0)) }
        guard ttl > .zero else { return ([:], keyed) }
        let now = tick(now)
        return entries.withLock { entries in
            var known: [AppToken: TokenRegistryState] = [:]
            var missing: [(token: AppToken, key: Key)] = []
            missing.reserveCapacity(keyed.count)
            for (token, key) in keyed {
                if let entry = entries[key], entry.expires > now { known[token] = entry.state } else { missing.append((token, key)) }
            }
            return (known, missing)
        }
    }

    /// Keeps what the registry said about `asked` (absent from `states`: unknown).
    func remember(asked: [(token: AppToken, key: Key)], states: [AppToken: TokenRegistryState],
                  now: ContinuousClock.Instant = .now) {
        guard ttl > .zero, !asked.isEmpty else { return }
        let now = tick(now)
        let (expires, overflow) = now.addingReportingOverflow(ttlTicks)
        let expiry = overflow ? Int64.max : expires
        entries.withLock { entries in
            if entries.count + asked.count > capacity {
                // In place, so the table keeps its size (`filter` would build a growing one).
                let expired = entries.compactMap { $0.value.expires > now ? nil : $0.key }
                for key in expired { entries.removeValue(forKey: key) }
                if entries.count + asked.count > capacity { entries.removeAll(keepingCapacity: true) }
            }
            for (token, key) in asked {
                // Most batches find no token in the registry: no look-up then.
                let state = states.isEmpty ? .unknown : states[token] ?? .unknown
                entries[key] = Entry(expires: expiry, state: state)
            }
        }
    }

    /// Drops what is cached about `tokens` (the worker just changed them in the registry).
    func forget(_ tokens: some Sequence<AppToken>) {
        guard ttl > .zero else { return }
        let keys = tokens.map(Key.init)
        entries.withLock { entries in
            for key in keys { entries[key] = nil }
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
