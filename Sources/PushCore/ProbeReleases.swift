/// How many parked sends of one provider client may come back while its
/// circuit is recovering (open past its cool-down, or half-open): as many as
/// the probes still to send. The rest stay parked until the probes' answers
/// close the circuit (then every parked send may go) or open it again (then
/// they wait out the next cool-down). Were every parked send let back at the
/// end of each cool-down, all but the probes would be refused and parked
/// again: one more parked message per held delivery per cool-down.
///
/// A round lasts from one probe answer to the next; it starts again after
/// `lease` if a released send never reached the breaker (its delivery had
/// ended meanwhile, say), so a lost release delays the next probe by at most
/// `lease`. Pure state: time comes in as `now`.
public struct ProbeReleases: Sendable {
    /// How long released sends may take to reach the breaker before more go.
    public static let lease = Duration.seconds(5)

    private var round: Round?

    private struct Round: Sendable {
        /// The breaker's answers so far: a new failure or success starts a new round.
        var timesOpened: Int
        var probeSuccesses: Int
        var started: ContinuousClock.Instant
        /// Sends this round may release, and those it did.
        var allowance: Int
        var released = 0

        func isCurrent(_ breaker: CircuitBreaker, now: ContinuousClock.Instant) -> Bool {
            timesOpened == breaker.timesOpened && probeSuccesses == breaker.probeSuccesses && now - started < ProbeReleases.lease
        }
    }

    public init() {}

    /// Whether one more parked send may go now, counting it when it may:
    /// always while the circuit is closed, never while its cool-down runs,
    /// and while recovering up to the probes still to send.
    public mutating func release(_ breaker: CircuitBreaker, now: ContinuousClock.Instant) -> Bool {
        switch breaker.state {
        case .closed:
            round = nil
            return true
        case .open(let until) where until > now:
            return false
        case .open, .halfOpen:
            if round.map({ !$0.isCurrent(breaker, now: now) }) ?? true {
                round = Round(timesOpened: breaker.timesOpened, probeSuccesses: breaker.probeSuccesses, started: now,
                              allowance: breaker.probesToSend)
            }
            guard let current = round, current.released < current.allowance else { return false }
            round?.released += 1
            return true
        }
    }
}
