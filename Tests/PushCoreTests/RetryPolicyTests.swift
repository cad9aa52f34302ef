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

    func testRetryAfterLongerThanTheLargestTierIsHonoured() {
        let policy = RetryPolicy()
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: .seconds(3600), expiresAt: nil, now: now, jitter: 0),
                       .retry(tier: RetryTier.defaults[2], delay: .seconds(3600), attempt: 2))
        // …unless the notification expires first.
        XCTAssertEqual(policy.decide(attempt: 1, retryAfter: .seconds(3600), expiresAt: now.addingTimeInterval(1800), now: now, jitter: 0), .expired)
    }

    func testFCMQuotaExceededWaitsAtLeastAMinute() {
        let outcome = ResponseClassifier.classify(.fcm, ProviderResponse(
            status: 429, headers: [("retry-after", "1")],
            body: Array(#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"errorCode":"QUOTA_EXCEEDED"}]}}"#.utf8)))
        guard case .transient(_, let retryAfter) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(retryAfter, .seconds(60))
        XCTAssertEqual(RetryPolicy().decide(attempt: 1, retryAfter: retryAfter, expiresAt: nil, now: now, jitter: 0),
                       .retry(tier: RetryTier.defaults[1], delay: .seconds(60), attempt: 2))
    }

    func testJitterSpreadsTheBackoffBetweenHalfAndAll() {
        // 5 s × 2² = 20 s: jitter 0 wants 10 s (the 10 s tier), jitter ~1 wants ~20 s (the 20 s tier).
        let tiers = [RetryTier(name: "10s", delay: .seconds(10)), RetryTier(name: "20s", delay: .seconds(20))]
        let policy = RetryPolicy(maxAttempts: 9, baseDelay: .seconds(5), tiers: tiers)
        XCTAssertEqual(policy.decide(attempt: 3, retryAfter: nil, expiresAt: nil, now: now, jitter: 0),
                       .retry(tier: tiers[0], delay: .seconds(10), attempt: 4))
        XCTAssertEqual(policy.decide(attempt: 3, retryAfter: nil, expiresAt: nil, now: now, jitter: 0.99),
                       .retry(tier: tiers[1], delay: .seconds(20), attempt: 4))
        // Out-of-range inputs never crash.
        XCTAssertEqual(policy.decide(attempt: 0, retryAfter: nil, expiresAt: nil, now: now, jitter: -3),
                       .retry(tier: tiers[0], delay: .seconds(10), attempt: 1))
        XCTAssertEqual(policy.decide(attempt: 500, retryAfter: nil, expiresAt: nil, now: now, jitter: 7), .exhausted)
        XCTAssertEqual(RetryPolicy(tiers: []).decide(attempt: 1, retryAfter: nil, expiresAt: nil, now: now, jitter: 0), .exhausted)
    }
}
