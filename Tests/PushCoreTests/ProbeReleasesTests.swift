import XCTest

@testable import PushCore

/// While a circuit recovers, only its probes' parked messages come back; the
/// rest wait for the probes' answers instead of being refused and parked again.
final class ProbeReleasesTests: XCTestCase {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .nanoseconds(Int64(seconds * 1e9)) }

    /// A breaker opened at 0 s with a 1 s cool-down and three probes.
    func openedBreaker() -> CircuitBreaker {
        var breaker = CircuitBreaker(configuration: .init(
            failureRatio: 0.5, minimumRequests: 5, window: .seconds(10), openDuration: .seconds(1), halfOpenProbes: 3))
        for _ in 0..<5 { breaker.record(.failure, now: at(0)) }
        return breaker
    }

    /// How many of `count` parked messages asked at `now` may go.
    func released(_ count: Int, _ releases: inout ProbeReleases, _ breaker: CircuitBreaker, now: ContinuousClock.Instant) -> Int {
        (0..<count).filter { _ in releases.release(breaker, now: now) }.count
    }

    func testAClosedCircuitLetsEveryParkedMessageGo() {
        var releases = ProbeReleases()
        let breaker = CircuitBreaker(configuration: .init())
        XCTAssertEqual(released(1_000, &releases, breaker, now: at(0)), 1_000)
    }

    func testOnlyTheProbesGoAfterTheCoolDownAndTheRestWaitForTheirAnswers() {
        var breaker = openedBreaker()
        var releases = ProbeReleases()
        XCTAssertEqual(released(100, &releases, breaker, now: at(0.5)), 0, "nothing goes while the cool-down runs")
        XCTAssertEqual(released(100, &releases, breaker, now: at(1)), 3, "the cool-down is over: three probes, not a hundred")
        // The three reach the breaker; asking again while they are out lets nothing else go.
        for _ in 0..<3 { XCTAssertTrue(breaker.allowRequest(now: at(1.1))) }
        XCTAssertEqual(released(100, &releases, breaker, now: at(1.2)), 0)
        // They succeed: the circuit closes and everything goes.
        for _ in 0..<3 { breaker.record(.success, now: at(1.3)) }
        XCTAssertEqual(breaker.state, .closed)
        XCTAssertEqual(released(100, &releases, breaker, now: at(1.3)), 100)
    }

    func testAFailedProbeHoldsTheRestUntilTheNextCoolDownEnds() {
        var breaker = openedBreaker()
        var releases = ProbeReleases()
        XCTAssertEqual(released(100, &releases, breaker, now: at(1)), 3)
        for _ in 0..<3 { XCTAssertTrue(breaker.allowRequest(now: at(1.1))) }
        breaker.record(.failure, now: at(1.2))
        XCTAssertEqual(breaker.state, .open(until: at(2.2)))
        XCTAssertEqual(released(100, &releases, breaker, now: at(1.5)), 0, "open again: the rest wait where they are")
        XCTAssertEqual(released(100, &releases, breaker, now: at(2.2)), 3, "the next cool-down's probes")
    }

    func testEachSuccessLetsBackOnlyTheProbesStillToSend() {
        var breaker = openedBreaker()
        var releases = ProbeReleases()
        XCTAssertEqual(released(100, &releases, breaker, now: at(1)), 3)
        for _ in 0..<3 { XCTAssertTrue(breaker.allowRequest(now: at(1.1))) }
        breaker.record(.success, now: at(1.2))
        XCTAssertEqual(breaker.probesToSend, 0, "two successes still needed, two probes out")
        XCTAssertEqual(released(100, &releases, breaker, now: at(1.2)), 0)
        // One probe's delivery ended before it was sent (a neutral answer frees its slot).
        breaker.record(.neutral, now: at(1.3))
        XCTAssertEqual(breaker.probesToSend, 1)
        XCTAssertEqual(released(100, &releases, breaker, now: at(1.3 + ProbeReleases.lease.seconds)), 1,
                       "once the round's lease is over, the one probe still to send")
    }

    func testAReleaseThatNeverReachesTheBreakerDelaysTheNextProbeByTheLeaseAtMost() {
        let breaker = openedBreaker()
        var releases = ProbeReleases()
        XCTAssertEqual(released(100, &releases, breaker, now: at(1)), 3)
        // None of the three was sent (their deliveries had ended): the breaker never heard of them.
        XCTAssertEqual(released(100, &releases, breaker, now: at(1 + ProbeReleases.lease.seconds - 0.1)), 0)
        XCTAssertEqual(released(100, &releases, breaker, now: at(1 + ProbeReleases.lease.seconds)), 3)
    }
}
