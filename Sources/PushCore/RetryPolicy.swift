import Foundation

/// One delayed-retry tier: a topic whose messages all wait the same delay.
public struct RetryTier: Sendable, Equatable {
    public var name: String
    public var delay: Duration
    public init(name: String, delay: Duration) {
        self.name = name
        self.delay = delay
    }
    /// The default tiers: 5 s, 1 min, 10 min.
    public static let defaults = [
        RetryTier(name: "5s", delay: .seconds(5)),
        RetryTier(name: "1m", delay: .seconds(60)),
        RetryTier(name: "10m", delay: .seconds(600)),
    ]
}

/// What to do with a delivery its provider could not take.
public enum HoldDecision: Sendable, Equatable {
    /// Park it; the worker that reads it looks again from `due`.
    case park(due: Date)
    /// Held past its limit: dead-letter it.
    case exhausted(limit: Duration)
    /// It would expire before it could go: record it expired.
    case expired
}

/// What to do after a failed attempt.
public enum RetryDecision: Sendable, Equatable {
    /// Re-send after `delay` via `tier`, as attempt number `attempt`.
    case retry(tier: RetryTier, delay: Duration, attempt: Int)
    /// Out of attempts: dead-letter it.
    case exhausted
    /// It would expire before the retry is due: record it expired.
    case expired
}

/// Exponential backoff with jitter over fixed-delay tiers. Pure: the caller
/// passes the time and a random unit so tests are deterministic.
public struct RetryPolicy: Sendable, Equatable {
    public var maxAttempts: Int
    public var baseDelay: Duration
    public var tiers: [RetryTier]
    /// The longest a delivery stays parked because its provider could not
    /// take it (an outage, a rate limit) before it is dead-lettered.
    public var maxHold: Duration = .seconds(24 * 3_600)
    /// The longest a delivery stays parked because no credential could be had
    /// for its app (a token endpoint that refuses, a key that cannot sign):
    /// an operator has to act, and the dead letter says so.
    public var maxCredentialHold: Duration = .seconds(3_600)

    public init(maxAttempts: Int = 5, baseDelay: Duration = .seconds(5), tiers: [RetryTier] = RetryTier.defaults) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.tiers = tiers.sorted { $0.delay < $1.delay }
    }

    /// How long after its last attempt a delivery waiting on a retry tier is
    /// taken to still have its retry message coming: the longest wait a retry
    /// can be given (the largest tier, or the longest `Retry-After` honoured),
    /// plus an hour for the tier's consumers to be behind. Past it the retry
    /// message is presumed lost, and a copy from the intake topic is sent.
    public var retryOwnership: Duration {
        max(tiers.last?.delay ?? .zero, .seconds(RetryAfter.maxSeconds)) + .seconds(3_600)
    }

    /// How long after it was last parked a parked delivery is taken to still
    /// have its parked message coming (the longest hold, plus an hour): a copy
    /// from the intake topic is not sent meanwhile.
    public var parkOwnership: Duration { max(maxHold, maxCredentialHold) + .seconds(3_600) }

    /// What becomes of a delivery its provider could not take: parked until
    /// `retryAfter` has passed (at least a second, at most `maxParkDelay`:
    /// the worker holding the parked message looks again then, and sooner
    /// if the provider can take it), expired if it would expire by then, or
    /// dead-lettered once held longer than its limit since `heldSince`.
    public func decideHeld(heldSince: Date, credential: Bool, retryAfter: Duration?, expiresAt: Date?, now: Date) -> HoldDecision {
        let limit = credential ? maxCredentialHold : maxHold
        if now.timeIntervalSince(heldSince) >= limit.seconds { return .exhausted(limit: limit) }
        let wait = min(max(retryAfter ?? .seconds(1), .seconds(1)), Self.maxParkDelay)
        let due = now.addingTimeInterval(wait.seconds)
        if let expiresAt, due >= expiresAt { return .expired }
        return .park(due: due)
    }

    /// The longest a parked message asks to be left alone: the worker holding
    /// it looks again at least this often, whatever the provider's `Retry-After`.
    public static let maxParkDelay = Duration.seconds(600)

    /// Decide after attempt number `attempt` (1-based) failed transiently.
    /// `jitter` is a random value in 0..<1 (full jitter between half and all of the backoff).
    /// The delay is the first tier at least as long as the backoff (or the
    /// provider's `Retry-After`); a `Retry-After` longer than the largest tier
    /// is honoured as is, on the largest tier.
    public func decide(attempt: Int, retryAfter: Duration?, expiresAt: Date?, now: Date, jitter: Double) -> RetryDecision {
        guard attempt < maxAttempts, let largest = tiers.last else { return .exhausted }
        let exponent = min(max(attempt - 1, 0), 20)
        let backoff = baseDelay * (1 << exponent)
        let jittered = backoff * (0.5 + 0.5 * min(max(jitter, 0), 1))
        let wanted = max(jittered, retryAfter ?? .zero)
        let tier = tiers.first(where: { $0.delay >= wanted }) ?? largest
        let delay = max(tier.delay, retryAfter ?? .zero)
        if let expiresAt, now.addingTimeInterval(delay.seconds) >= expiresAt {
            return .expired
        }
        return .retry(tier: tier, delay: delay, attempt: attempt + 1)
    }
}

extension Duration {
    /// Seconds as a Double.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
