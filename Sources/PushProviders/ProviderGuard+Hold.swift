import Foundation
import PushCore

extension ProviderGuard {
    /// When this client can take a send again, nil when it can now: the end
    /// of an open circuit's cool-down; a second later while half-open probes
    /// are out (their outcome decides); the end of a rate-limit pause or
    /// reservation longer than a send waits (`maxRateLimitWait`).
    func heldUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        state.withLock { state in
            switch state.breaker.state {
            case .open(let until) where until > now: return until
            case .halfOpen where !state.breaker.hasProbeSlot: return now + .seconds(1)
            default: break
            }
            guard let free = state.limiter.nextFree(now: now), free - now > policy.maxRateLimitWait else { return nil }
            return free
        }
    }

    /// Sets the rate-limit ceiling (a replica's share of a fleet-wide quota).
    func setRateCeiling(_ perSecond: Double) {
        let now = ContinuousClock.now
        state.withLock { $0.limiter.setCeiling(ratePerSecond: perSecond, now: now) }
    }

    /// The ceiling in force, nil when unlimited.
    var rateCeiling: Double? { state.withLock { $0.limiter.configuration.ratePerSecond } }
}

extension Date {
    /// `self` as an instant of the continuous clock, `now` being `clockNow`.
    func instant(now: Date = Date(), clockNow: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        clockNow + .seconds(max(0, timeIntervalSince(now)))
    }
}

/// A provider client's holds and quota share, for the worker's parking and
/// its share of a fleet-wide quota.
public protocol ProviderHolding: Sendable {
    /// When the client can take a send again (nil: now).
    func heldUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant?
    /// Sets the client's rate-limit ceiling, in requests per second.
    func setRateCeiling(_ perSecond: Double)
    /// The client's rate-limit ceiling, nil when unlimited.
    var rateCeiling: Double? { get }
}

extension APNsClient: ProviderHolding {
    public func heldUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { guardian.heldUntil(now: now) }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}

extension FCMClient: ProviderHolding {
    public func heldUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        [guardian.heldUntil(now: now), tokens.cache.failingUntil().map { $0.instant(clockNow: now) }].compactMap { $0 }.max()
    }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}

extension HMSClient: ProviderHolding {
    public func heldUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        [guardian.heldUntil(now: now), tokens.cache.failingUntil().map { $0.instant(clockNow: now) }].compactMap { $0 }.max()
    }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}
