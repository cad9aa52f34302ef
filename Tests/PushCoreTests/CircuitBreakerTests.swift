import XCTest

@testable import PushCore

final class CircuitBreakerTests: XCTestCase {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .nanoseconds(Int64(seconds * 1e9)) }

    func makeBreaker() -> CircuitBreaker {
        CircuitBreaker(configuration: .init(
            failureRatio: 0.5, minimumRequests: 20, window: .seconds(10), openDuration: .seconds(30), halfOpenProbes: 3))
    }

    func testStaysClosedBelowTheMinimumVolumeOrRatio() {
        var breaker = makeBreaker()
        for i in 0..<19 { breaker.record(.failure, now: at(Double(i) * 0.1)) }
        XCTAssertEqual(breaker.state, .closed, "19 requests are below the minimum of 20")
        var mixed = makeBreaker()
        for i in 0..<100 { mixed.record(i % 3 == 0 ? .failure : .success, now: at(Double(i) * 0.05)) }
        XCTAssertEqual(mixed.state, .closed, "a third failing is below 50 %")
        XCTAssertTrue(mixed.allowRequest(now: at(6)))
    }

    func testOpensAtTheThresholdAndRefusesUntilTheCoolDown() {
        var breaker = makeBreaker()
        for i in 0..<10 { breaker.record(.success, now: at(Double(i) * 0.1)) }
        for i in 0..<9 { XCTAssertNil(breaker.record(.failure, now: at(1 + Double(i) * 0.1))) }
        XCTAssertEqual(breaker.state, .closed)
        XCTAssertEqual(breaker.record(.failure, now: at(2)), .open(until: at(32)))
        XCTAssertEqual(breaker.state.gaugeValue, 2)
        XCTAssertFalse(breaker.allowRequest(now: at(20)))
        // Late answers of requests sent before it opened change nothing.
        XCTAssertNil(breaker.record(.success, now: at(21)))
        XCTAssertEqual(breaker.timesOpened, 1)
    }

    func testOldFailuresLeaveTheWindow() {
        var breaker = makeBreaker()
        for i in 0..<15 { breaker.record(.failure, now: at(Double(i) * 0.01)) }
        // 15 s later those are out of the 10 s window: 15 successes alone do not open it.
        for i in 0..<15 { breaker.record(.success, now: at(15 + Double(i) * 0.01)) }
        for i in 0..<10 { breaker.record(.failure, now: at(16 + Double(i) * 0.01)) }
        XCTAssertEqual(breaker.state, .closed, "10 of 25 in the window fail: 40 %")
    }

    func testHalfOpenAllowsProbesAndClosesOnSuccess() {
        var breaker = makeBreaker()
        for i in 0..<20 { breaker.record(.failure, now: at(Double(i) * 0.01)) }
        guard case .open = breaker.state else { return XCTFail("expected open") }
        XCTAssertTrue(breaker.allowRequest(now: at(31)))
        XCTAssertEqual(breaker.state, .halfOpen)
        XCTAssertEqual(breaker.state.gaugeValue, 1)
        XCTAssertTrue(breaker.allowRequest(now: at(31)))
        XCTAssertTrue(breaker.allowRequest(now: at(31)))
        XCTAssertFalse(breaker.allowRequest(now: at(31)), "only 3 probes at a time")
        breaker.record(.neutral, now: at(31.5))
        XCTAssertTrue(breaker.allowRequest(now: at(31.5)), "a neutral outcome frees its probe slot")
        XCTAssertNil(breaker.record(.success, now: at(32)))
        XCTAssertNil(breaker.record(.success, now: at(32)))
        XCTAssertEqual(breaker.record(.success, now: at(32)), .closed)
        XCTAssertTrue(breaker.allowRequest(now: at(32)))
        // Closed again with a fresh window: 19 failures do not re-open it.
        for _ in 0..<19 { breaker.record(.failure, now: at(33)) }
        XCTAssertEqual(breaker.state, .closed)
    }

    func testHalfOpenProbeFailureReopens() {
        var breaker = makeBreaker()
        for _ in 0..<20 { breaker.record(.failure, now: at(0)) }
        XCTAssertTrue(breaker.allowRequest(now: at(30)))
        XCTAssertEqual(breaker.record(.failure, now: at(30.5)), .open(until: at(60.5)))
        XCTAssertFalse(breaker.allowRequest(now: at(40)))
        XCTAssertEqual(breaker.timesOpened, 2)
    }

    func testValidation() {
        XCTAssertNil(CircuitBreaker.Configuration().problem)
        XCTAssertEqual(CircuitBreaker.Configuration(failureRatio: 0).problem?.field, "failure_ratio")
        XCTAssertEqual(CircuitBreaker.Configuration(minimumRequests: 0).problem?.field, "minimum_requests")
        XCTAssertEqual(CircuitBreaker.Configuration(halfOpenProbes: 0).problem?.field, "half_open_probes")
    }

    /// Half-open, the probes go and the rest wait for their outcome.
    func testHalfOpenHasProbeSlotsOnlyUntilTheProbesAreOut() {
        let t0 = ContinuousClock.now
        var breaker = CircuitBreaker(configuration: .init(minimumRequests: 1, openDuration: .seconds(10), halfOpenProbes: 2))
        XCTAssertTrue(breaker.hasProbeSlot, "closed: everything goes")
        breaker.record(.failure, now: t0)
        XCTAssertFalse(breaker.hasProbeSlot, "open")
        XCTAssertTrue(breaker.allowRequest(now: t0 + .seconds(11)))
        XCTAssertTrue(breaker.hasProbeSlot, "one probe of two out")
        XCTAssertTrue(breaker.allowRequest(now: t0 + .seconds(11)))
        XCTAssertFalse(breaker.hasProbeSlot, "both probes out: the rest wait")
    }
}
