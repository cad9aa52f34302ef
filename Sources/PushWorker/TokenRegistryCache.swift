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
final class TokenRegistryCache: Sendable {
    private struct Entry: Sendable {
        var state: TokenRegistryState
        var expires: ContinuousClock.Instant
    }

    let ttl: Duration
    let capacity: Int
    private let entries = Locked<[OutcomeStore.AppToken: Entry]>([:])

    init(ttl: Duration, capacity: Int = 200_000) {
        self.ttl = ttl
        self.capacity = max(1, capacity)
    }

    /// The fresh states among `tokens`, and the tokens to ask the registry about.
    func split(_ tokens: Set<OutcomeStore.AppToken>, now: ContinuousClock.Instant = .now)
        -> (known: [OutcomeStore.AppToken: TokenRegistryState], missing: [OutcomeStore.AppToken])
    {
        guard ttl > .zero else { return ([:], Array(tokens)) }
        return entries.withLock { entries in
            var known: [OutcomeStore.AppToken: TokenRegistryState] = [:]
            var missing: [OutcomeStore.AppToken] = []
            for token in tokens {
                if let entry = entries[token], entry.expires > now { known[token] = entry.state } else { missing.append(token) }
            }
            return (known, missing)
        }
    }

    /// Keeps what the registry said about `asked` (absent from `states`: unknown).
    func remember(asked: [OutcomeStore.AppToken], states: [OutcomeStore.AppToken: TokenRegistryState],
                  now: ContinuousClock.Instant = .now) {
        guard ttl > .zero, !asked.isEmpty else { return }
        let expires = now + ttl
        entries.withLock { entries in
            if entries.count + asked.count > capacity {
                entries = entries.filter { $0.value.expires > now }
                if entries.count + asked.count > capacity { entries.removeAll(keepingCapacity: true) }
            }
            for token in asked { entries[token] = Entry(state: states[token] ?? .unknown, expires: expires) }
        }
    }

    /// Drops what is cached about `tokens` (the worker just changed them in the registry).
    func forget(_ tokens: some Sequence<OutcomeStore.AppToken>) {
        guard ttl > .zero else { return }
        entries.withLock { entries in
            for token in tokens { entries[token] = nil }
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
