import Foundation
import PushCore

extension ProviderGuard {
    /// When a parked send of this client may come back, nil when it may now
    /// (and it is then counted: while the circuit recovers, only as many go
    /// as probes are still to send, `ProbeReleases`): the end of an open
    /// circuit's cool-down; a second later while the probes out decide; the
    /// end of a rate-limit pause or reservation longer than a send waits
    /// (`maxRateLimitWait`).
    func releaseParked(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        state.withLock { state in
            if case .open(let until) = state.breaker.state, until > now { return until }
            if let free = state.limiter.nextFree(now: now), free - now > policy.maxRateLimitWait { return free }
            return state.releases.release(state.breaker, now: now) ? nil : now + .seconds(1)
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
    /// When a parked send may come back (nil: now, and it is counted as
    /// let back; see `ProviderGuard.releaseParked`).
    func releaseParked(now: ContinuousClock.Instant) -> ContinuousClock.Instant?
    /// Sets the client's rate-limit ceiling, in requests per second.
    func setRateCeiling(_ perSecond: Double)
    /// The client's rate-limit ceiling, nil when unlimited.
    var rateCeiling: Double? { get }
}

extension APNsClient: ProviderHolding {
    public func releaseParked(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { guardian.releaseParked(now: now) }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}

extension FCMClient: ProviderHolding {
    public func releaseParked(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        tokens.cache.failingUntil().map { $0.instant(clockNow: now) } ?? guardian.releaseParked(now: now)
    }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}

extension HMSClient: ProviderHolding {
    public func releaseParked(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        tokens.cache.failingUntil().map { $0.instant(clockNow: now) } ?? guardian.releaseParked(now: now)
    }
    public func setRateCeiling(_ perSecond: Double) { guardian.setRateCeiling(perSecond) }
    public var rateCeiling: Double? { guardian.rateCeiling }
}
