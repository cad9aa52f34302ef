import Foundation
import XCTest
@testable import PushCore

final class RetryPolicyTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_795_262_400)

    func testBackoffClimbsTheTiers() {
        let policy = RetryPolicy(maxAttempts: 5)
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: nil, expiresAt: nil, now: now, jitter: 0.5),
                       .retry(tier: RetryTier.defaults[0], delay: .seconds(5), attempt: 2))
        XCTAssertEqual(policy.decide(attempt: 2, retryAfter: nil, expiresAt: nil, now: now, jitter: 1),
                       .retry(tier: RetryTier.defaults[1], delay: .seconds(60), attempt: 3))
        // 5 s × 2³ = 40 s fits the 1 m tier; 5 s × 2⁴ = 80 s needs the 10 m tier.
        XCTAssertEqual(policy.decide(attempt: 4, retryAfter: nil, expiresAt: nil, now: now, jitter: 1),
                       .retry(tier: RetryTier.defaults[1], delay: .seconds(60), attempt: 5))
        XCTAssertEqual(RetryPolicy(maxAttempts: 8).decide(attempt: 5, retryAfter: nil, expiresAt: nil, now: now, jitter: 1),
                       .retry(tier: RetryTier.defaults[2], delay: .seconds(600), attempt: 6))
        XCTAssertEqual(policy.decide(attempt: 5, retryAfter: nil, expiresAt: nil, now: now, jitter: 0), .exhausted)
    }

    func testRetryAfterPicksATierAtLeastThatLong() {
        let policy = RetryPolicy()
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: .seconds(61), expiresAt: nil, now: now, jitter: 0),
                       .retry(tier: RetryTier.defaults[2], delay: .seconds(600), attempt: 2))
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: .seconds(60), expiresAt: nil, now: now, jitter: 0),
                       .retry(tier: RetryTier.defaults[1], delay: .seconds(60), attempt: 2))
    }

    func testStopsAtExpiry() {
        let policy = RetryPolicy()
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: nil, expiresAt: now.addingTimeInterval(4), now: now, jitter: 0), .expired)
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: nil, expiresAt: now.addingTimeInterval(6), now: now, jitter: 0),
                       .retry(tier: RetryTier.defaults[0], delay: .seconds(5), attempt: 2))
    }
}
