import Foundation
import PushCore

/// What the health endpoints report: fed by the worker (partitions assigned
/// and revoked, PostgreSQL reachability, a heartbeat from every poll-loop
/// turn), read by `/health/live` and `/health/ready`.
///
/// - live: the poll loop beat within `livenessWindow`. A wedged loop (stuck
///   in a blocking call, deadlocked) stops beating and goes not-live, so the
///   orchestrator restarts it. Before the first beat the process counts as
///   live for `livenessWindow` after start, so a slow start is not killed.
/// - ready: live, at least one partition assigned, PostgreSQL reachable,
///   and not stopping (`markStopping()` on SIGTERM takes the pod out of
///   load balancing while it drains).
public final class HealthState: Sendable {
    /// The longest gap between poll-loop heartbeats that still counts as live.
    public let livenessWindow: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state: Locked<State>

    private struct State {
        var partitionsAssigned = 0
        var postgresReachable = false
        var stopping = false
        var lastBeat: ContinuousClock.Instant
        var details = HealthDetails()
    }

    /// - Parameters:
    ///   - livenessWindow: see `livenessWindow`; 30 s by default.
    ///   - now: the clock (tests move it).
    public init(livenessWindow: Duration = .seconds(30),
                now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.livenessWindow = livenessWindow
        self.now = now
        // Not a beat: a start grace period of one window.
        self.state = Locked(State(lastBeat: now()))
    }

    /// Called on every poll-loop turn (also when a poll returned nothing).
    public func heartbeat() {
        let instant = now()
        state.withLock { $0.lastBeat = instant }
    }

    /// The number of partitions this worker currently owns.
    public func setPartitionsAssigned(_ count: Int) {
        state.withLock { $0.partitionsAssigned = max(count, 0) }
    }

    /// Whether the last PostgreSQL operation or check succeeded.
    public func setPostgresReachable(_ reachable: Bool) {
        state.withLock { $0.postgresReachable = reachable }
    }

    /// Lanes, providers and backlog, as the worker last looked (reported, not judged).
    public func setDetails(_ details: HealthDetails) {
        state.withLock { $0.details = details }
    }

    /// The worker is draining for shutdown: never ready again.
    public func markStopping() {
        state.withLock { $0.stopping = true }
    }

    /// A consistent view of the current health.
    public func snapshot() -> HealthSnapshot {
        let instant = now()
        return state.withLock { s in
            var snapshot = HealthSnapshot(
                partitionsAssigned: s.partitionsAssigned, postgresReachable: s.postgresReachable,
                sinceLastBeat: instant - s.lastBeat, livenessWindow: livenessWindow, stopping: s.stopping)
            snapshot.details = s.details
            return snapshot
        }
    }

    /// The poll loop beat within the window.
    public var isLive: Bool { snapshot().live }
    /// Live, with partitions and PostgreSQL.
    public var isReady: Bool { snapshot().ready }
}
