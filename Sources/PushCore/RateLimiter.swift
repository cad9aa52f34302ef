/// A token-bucket rate limiter that adapts to the provider: it slows down
/// multiplicatively on a 429, honours `Retry-After` as a pause, and speeds up
/// again additively, one step per quiet interval, back to the configured ceiling.
///
/// Pure state machine: time comes in as `now`, nothing sleeps. `acquire(now:)`
/// takes a token at once or *reserves* the next free one and says when it is
/// due, so many waiting callers are spread out instead of waking together.
public struct TokenBucketLimiter: Sendable {
    /// Limits and adaptation speeds.
    public struct Configuration: Sendable, Equatable {
        /// The ceiling, in requests per second; nil means unlimited (a 429
        /// still pauses the limiter for its `Retry-After`).
        public var ratePerSecond: Double?
        /// Tokens the bucket holds at most: the burst allowed after a quiet spell.
        public var burst: Double
        /// The rate never adapts below this fraction of the ceiling.
        public var floorFraction: Double
        /// Each 429 multiplies the rate by this (0 < factor < 1).
        public var decreaseFactor: Double
        /// Two decreases are at least this far apart, so a burst of 429s from
        /// requests already in flight counts as one signal.
        public var decreaseSpacing: Duration
        /// After this long without a 429 the rate grows by one step.
        public var quietInterval: Duration
        /// One additive step, as a fraction of the ceiling.
        public var increaseFraction: Double
        /// The pause after a 429 without `Retry-After`.
        public var defaultPause: Duration

        /// FCM's default quota: 600,000 messages per minute per project.
        public static let fcmDefault = Configuration(ratePerSecond: 10_000, burst: 10_000)
        /// APNs publishes no quota: unlimited, but a 429 still pauses.
        public static let apnsDefault = Configuration(ratePerSecond: nil, burst: 1)

        public init(
            ratePerSecond: Double?, burst: Double, floorFraction: Double = 0.05, decreaseFactor: Double = 0.5,
            decreaseSpacing: Duration = .seconds(1), quietInterval: Duration = .seconds(10),
            increaseFraction: Double = 0.05, defaultPause: Duration = .seconds(1)
        ) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
            self.floorFraction = floorFraction
            self.decreaseFactor = decreaseFactor
            self.decreaseSpacing = decreaseSpacing
            self.quietInterval = quietInterval
            self.increaseFraction = increaseFraction
            self.defaultPause = defaultPause
        }

        /// The first value out of range, as `(field, problem)`; nil when valid.
        public var problem: (field: String, message: String)? {
            if let rate = ratePerSecond, !(rate > 0 && rate.isFinite) { return ("rate_per_second", "must be > 0") }
            if !(burst >= 1 && burst.isFinite) { return ("burst", "must be ≥ 1") }
            if !(floorFraction > 0 && floorFraction <= 1) { return ("floor_fraction", "must be in (0, 1]") }
            if !(decreaseFactor > 0 && decreaseFactor < 1) { return ("decrease_factor", "must be in (0, 1)") }
            if !(increaseFraction > 0 && increaseFraction <= 1) { return ("increase_fraction", "must be in (0, 1]") }
            if quietInterval <= .zero { return ("quiet_interval", "must be > 0") }
            if defaultPause < .zero || decreaseSpacing < .zero { return ("default_pause", "must be ≥ 0") }
            return nil
        }
    }

    /// What a caller does next.
    public enum Decision: Sendable, Equatable {
        /// Send now.
        case go
        /// A token is reserved for this caller at that instant: send then.
        case waitUntil(ContinuousClock.Instant)
    }

    public private(set) var configuration: Configuration
    /// The rate in force now (requests per second); nil when unlimited.
    public private(set) var currentRate: Double?
    /// Tokens as of `stamp` (negative: reserved ahead).
    private var tokens: Double
    /// The instant `tokens` refers to; in the future during a pause.
    private var stamp: ContinuousClock.Instant?
    /// When the rate last changed (decrease or additive step).
    private var lastAdjustment: ContinuousClock.Instant?
    private var lastDecrease: ContinuousClock.Instant?

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.currentRate = configuration.ratePerSecond
        self.tokens = configuration.burst
    }
}

extension TokenBucketLimiter {
    /// Takes a token now, or reserves the next one and says when it is due.
    /// During a pause every caller is told to wait until the pause ends.
    public mutating func acquire(now: ContinuousClock.Instant) -> Decision {
        refill(now: now)
        tokens -= 1
        guard let stamp else { return .go }
        let rate = currentRate ?? .infinity
        let due = tokens >= 0 || rate == .infinity ? stamp : stamp + Self.duration(seconds: -tokens / rate)
        if currentRate == nil { tokens = max(tokens, 0) }  // unlimited: nothing to reserve
        return due <= now ? .go : .waitUntil(due)
    }

    /// The provider answered 429: halve the rate (at most once per
    /// `decreaseSpacing`) and pause for `retryAfter` (or `defaultPause`).
    public mutating func rateLimited(now: ContinuousClock.Instant, retryAfter: Duration?) {
        refill(now: now)
        if let rate = currentRate, let ceiling = configuration.ratePerSecond {
            let spaced = lastDecrease.map { now - $0 >= configuration.decreaseSpacing } ?? true
            if spaced {
                currentRate = max(ceiling * configuration.floorFraction, rate * configuration.decreaseFactor)
                lastDecrease = now
            }
        }
        lastAdjustment = now
        let pauseEnd = now + max(.zero, retryAfter ?? configuration.defaultPause)
        tokens = min(tokens, 0)
        if let current = stamp, current > pauseEnd { return }
        stamp = pauseEnd
    }

    /// When a token is free again, if not at `now`: the end of a pause, or
    /// the time the tokens reserved ahead are earned back. Reserves nothing.
    public mutating func nextFree(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        refill(now: now)
        guard let stamp else { return nil }
        if tokens >= 1 { return stamp > now ? stamp : nil }
        guard let rate = currentRate, rate > 0 else { return stamp > now ? stamp : nil }
        let due = stamp + Self.duration(seconds: (1 - tokens) / rate)
        return due > now ? due : nil
    }

    /// Sets the ceiling (requests per second, one second of burst): a
    /// replica's share of a fleet-wide quota, which moves as partitions move.
    /// The rate in force follows at once where it was at the ceiling, and
    /// never exceeds the new one.
    public mutating func setCeiling(ratePerSecond ceiling: Double, now: ContinuousClock.Instant) {
        guard ceiling > 0, ceiling.isFinite else { return }
        refill(now: now)
        let atCeiling = currentRate == configuration.ratePerSecond
        configuration.ratePerSecond = ceiling
        configuration.burst = max(1, ceiling)
        currentRate = atCeiling ? ceiling : min(currentRate ?? ceiling, ceiling)
        tokens = min(tokens, configuration.burst)
    }

    /// When the current pause ends, if one is in force at `now`.
    public func pausedUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let stamp, stamp > now else { return nil }
        return stamp
    }

    /// Adds the tokens earned since `stamp` and takes additive steps back up.
    private mutating func refill(now: ContinuousClock.Instant) {
        guard let previous = stamp else {
            stamp = now
            lastAdjustment = now
            return
        }
        increaseIfQuiet(now: now)
        guard now > previous else { return }  // paused, or the clock did not move
        if let rate = currentRate {
            let earned = Self.seconds(now - previous) * rate
            tokens = min(configuration.burst, tokens + earned)
        } else {
            tokens = configuration.burst
        }
        stamp = now
    }

    private mutating func increaseIfQuiet(now: ContinuousClock.Instant) {
        guard let rate = currentRate, let ceiling = configuration.ratePerSecond, rate < ceiling,
            let since = lastAdjustment
        else { return }
        let quiet = Self.seconds(configuration.quietInterval)
        let steps = (Self.seconds(now - since) / quiet).rounded(.down)
        guard steps >= 1 else { return }
        currentRate = min(ceiling, rate + steps * ceiling * configuration.increaseFraction)
        lastAdjustment = since + Self.duration(seconds: steps * quiet)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    static func duration(seconds: Double) -> Duration {
        let nanoseconds = (seconds * 1e9).rounded(.up)
        // Past Int64 nanoseconds (about 292 years), or NaN/infinity: the same far-away duration, no trap.
        guard nanoseconds.isFinite, abs(nanoseconds) < 9.2e18, let exact = Int64(exactly: nanoseconds) else {
            return .seconds(Int64.max / 4)
        }
        return .nanoseconds(exact)
    }
}

extension TokenBucketLimiter {
    /// Returns a token taken by `acquire` that will not be used (the caller
    /// gave up waiting), so refused callers do not push later ones back.
    public mutating func giveBack() {
        tokens = min(configuration.burst, tokens + 1)
    }
}
