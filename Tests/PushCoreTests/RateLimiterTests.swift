import PushTestSupport
import XCTest

@testable import PushCore

final class RateLimiterTests: XCTestCase {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .nanoseconds(Int64(seconds * 1e9)) }

    /// Property: whatever the arrival pattern, grants (send instants) in any
    /// window of length T number at most burst + rate × T (+1 for the edge).
    func testGrantsNeverExceedRateTimesWindowPlusBurst() {
        var random = FuzzRandom(seed: 42)
        for trial in 0..<30 {
            let rate = Double(random.next() % 200 + 5)
            let burst = Double(random.next() % 20 + 1)
            var limiter = TokenBucketLimiter(configuration: .init(ratePerSecond: rate, burst: burst))
            var now = 0.0
            var grants: [Double] = []
            for _ in 0..<2_000 {
                now += Double(random.next() % 1000) / 1000 / rate * 2
                switch limiter.acquire(now: at(now)) {
                case .go: grants.append(now)
                case .waitUntil(let due):
                    XCTAssertGreaterThan(due, at(now))
                    grants.append(TokenBucketLimiter.seconds(due - t0))
                }
            }
            grants.sort()
            for window in [0.1, 1.0, 5.0] {
                var start = 0
                for end in grants.indices {
                    while grants[end] - grants[start] > window { start += 1 }
                    let inWindow = Double(end - start + 1)
                    XCTAssertLessThanOrEqual(inWindow, burst + rate * window + 1, "trial \(trial) window \(window)")
                }
            }
        }
    }

    func testBurstThenSpacedReservations() {
        var limiter = TokenBucketLimiter(configuration: .init(ratePerSecond: 10, burst: 3))
        for _ in 0..<3 { XCTAssertEqual(limiter.acquire(now: at(0)), .go) }
        XCTAssertEqual(limiter.acquire(now: at(0)), .waitUntil(at(0.1)))
        XCTAssertEqual(limiter.acquire(now: at(0)), .waitUntil(at(0.2)))
        // After a quiet second the bucket is full again (capped at burst).
        for _ in 0..<3 { XCTAssertEqual(limiter.acquire(now: at(2)), .go) }
        guard case .waitUntil = limiter.acquire(now: at(2)) else { return XCTFail("expected a wait") }
    }

    func testRateLimitedHalvesPausesAndRecoversAdditively() {
        var config = TokenBucketLimiter.Configuration(ratePerSecond: 100, burst: 10)
        config.quietInterval = .seconds(10)
        config.increaseFraction = 0.1
        var limiter = TokenBucketLimiter(configuration: config)
        XCTAssertEqual(limiter.acquire(now: at(0)), .go)
        limiter.rateLimited(now: at(1), retryAfter: .seconds(5))
        XCTAssertEqual(limiter.currentRate, 50)
        XCTAssertEqual(limiter.pausedUntil(now: at(1)), at(6))
        // Everyone waits for the pause; the first token after it is reserved.
        guard case .waitUntil(let due) = limiter.acquire(now: at(2)) else { return XCTFail("expected a wait") }
        XCTAssertGreaterThanOrEqual(due, at(6))
        // A second 429 within decreaseSpacing does not halve again.
        limiter.rateLimited(now: at(1.5), retryAfter: nil)
        XCTAssertEqual(limiter.currentRate, 50)
        limiter.rateLimited(now: at(3), retryAfter: nil)
        XCTAssertEqual(limiter.currentRate, 25)
        // Additive increase: +10/s per quiet 10 s, capped at the ceiling.
        _ = limiter.acquire(now: at(13))
        XCTAssertEqual(limiter.currentRate, 35)
        _ = limiter.acquire(now: at(43))
        XCTAssertEqual(limiter.currentRate, 65)
        _ = limiter.acquire(now: at(500))
        XCTAssertEqual(limiter.currentRate, 100)
    }

    func testNeverBelowTheFloor() {
        var limiter = TokenBucketLimiter(configuration: .init(ratePerSecond: 100, burst: 1, floorFraction: 0.1))
        for i in 0..<50 { limiter.rateLimited(now: at(Double(i) * 2), retryAfter: .zero) }
        XCTAssertEqual(limiter.currentRate, 10)
    }

    func testUnlimitedStillHonoursRetryAfter() {
        var limiter = TokenBucketLimiter(configuration: .apnsDefault)
        for _ in 0..<10_000 { XCTAssertEqual(limiter.acquire(now: at(0)), .go) }
        limiter.rateLimited(now: at(1), retryAfter: .seconds(3))
        XCTAssertNil(limiter.currentRate)
        XCTAssertEqual(limiter.acquire(now: at(2)), .waitUntil(at(4)))
        XCTAssertEqual(limiter.acquire(now: at(2)), .waitUntil(at(4)))
        XCTAssertEqual(limiter.acquire(now: at(4)), .go)
    }

    func testFCMDefaultIs600kPerMinuteAndValidation() {
        XCTAssertEqual(TokenBucketLimiter.Configuration.fcmDefault.ratePerSecond.map { $0 * 60 }, 600_000)
        XCTAssertNil(TokenBucketLimiter.Configuration.fcmDefault.problem)
        XCTAssertEqual(TokenBucketLimiter.Configuration(ratePerSecond: 0, burst: 1).problem?.field, "rate_per_second")
        XCTAssertEqual(TokenBucketLimiter.Configuration(ratePerSecond: 1, burst: 0).problem?.field, "burst")
        XCTAssertEqual(
            TokenBucketLimiter.Configuration(ratePerSecond: 1, burst: 1, decreaseFactor: 1).problem?.field,
            "decrease_factor")
    }
}

/// A fleet-wide quota's share moves the ceiling; a parked send asks when a token is free.
final class RateLimiterCeilingTests: XCTestCase {
    let t0 = ContinuousClock.now

    func testTheCeilingFollowsTheShareAndNeverLetsMoreThrough() {
        var limiter = TokenBucketLimiter(configuration: .init(ratePerSecond: 100, burst: 100))
        limiter.setCeiling(ratePerSecond: 25, now: t0)
        XCTAssertEqual(limiter.configuration.ratePerSecond, 25)
        XCTAssertEqual(limiter.currentRate, 25, "at the ceiling before: at the new one now")
        var granted = 0
        for _ in 0..<100 where limiter.acquire(now: t0) == .go { granted += 1 }
        XCTAssertEqual(granted, 25, "the burst shrinks with the ceiling")
        limiter.setCeiling(ratePerSecond: 0, now: t0)
        XCTAssertEqual(limiter.configuration.ratePerSecond, 25, "a ceiling of 0 is ignored, never a division by zero")
        limiter.setCeiling(ratePerSecond: .nan, now: t0)
        XCTAssertEqual(limiter.configuration.ratePerSecond, 25)
    }

    func testNextFreeSaysWhenATokenComesWithoutTakingIt() {
        var limiter = TokenBucketLimiter(configuration: .init(ratePerSecond: 10, burst: 1))
        XCTAssertNil(limiter.nextFree(now: t0), "a token is there")
        XCTAssertEqual(limiter.acquire(now: t0), .go)
        let free = try? XCTUnwrap(limiter.nextFree(now: t0))
        XCTAssertEqual(free.map { TokenBucketLimiter.seconds($0 - t0) } ?? 0, 0.1, accuracy: 0.001)
        XCTAssertEqual(limiter.nextFree(now: t0).map { TokenBucketLimiter.seconds($0 - t0) } ?? 0, 0.1, accuracy: 0.001,
                       "asking reserves nothing")
        limiter.rateLimited(now: t0, retryAfter: .seconds(30))
        XCTAssertEqual(limiter.nextFree(now: t0).map { TokenBucketLimiter.seconds($0 - t0) } ?? 0, 30, accuracy: 0.2,
                       "a provider's pause holds it")
    }
}
