import Foundation
import XCTest
@testable import PushCore

/// Lanes: each has its own intake, retry and parked topics; the names come
/// from one place; parked deliveries wait within their hold limits.
final class LaneTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_795_262_400)

    func testEachLaneHasItsOwnTopicsAndEveryTopicHasOneLane() {
        let names = TopicNames(prefix: "acme", tiers: RetryTier.defaults)
        XCTAssertEqual(names.interactive.all, ["acme.notifications", "acme.retry.5s", "acme.retry.1m", "acme.retry.10m", "acme.parked"])
        XCTAssertEqual(names.bulk.all, ["acme.notifications.bulk", "acme.retry.5s.bulk", "acme.retry.1m.bulk", "acme.retry.10m.bulk",
                                        "acme.parked.bulk"])
        XCTAssertEqual(names.intake, "acme.notifications", "a producer's default is the interactive lane")
        for lane in Lane.allCases {
            for topic in names.topics(of: lane).all { XCTAssertEqual(names.lane(of: topic), lane, topic) }
        }
        XCTAssertNil(names.lane(of: names.devices))
        XCTAssertNil(names.lane(of: names.deadLetter))
        XCTAssertEqual(names.retryTier(of: "acme.retry.1m.bulk"), RetryTier.defaults[1])
        XCTAssertTrue(names.isParkedTopic("acme.parked.bulk"))
        XCTAssertFalse(names.isParkedTopic("acme.notifications.bulk"))
        XCTAssertEqual(names.consumed(by: .interactive).last, "acme.devices", "device events ride the interactive lane")
        XCTAssertFalse(names.consumed(by: .bulk).contains(names.devices))
        XCTAssertEqual(Set(names.all).count, names.all.count, "no topic named twice")
        XCTAssertEqual(names.bulk.retryTopic(for: RetryTier(name: "2h", delay: .seconds(7_200))), "acme.retry.10m.bulk",
                       "an unknown tier goes to the lane's last")
    }

    func testAHeldDeliveryIsParkedUntilItsRetryAfterWithinBounds() {
        let policy = RetryPolicy()
        XCTAssertEqual(policy.decideHeld(heldSince: now, credential: false, retryAfter: .seconds(30), expiresAt: nil, now: now),
                       .park(due: now.addingTimeInterval(30)))
        XCTAssertEqual(policy.decideHeld(heldSince: now, credential: false, retryAfter: nil, expiresAt: nil, now: now),
                       .park(due: now.addingTimeInterval(1)), "no Retry-After: look again in a second")
        XCTAssertEqual(policy.decideHeld(heldSince: now, credential: false, retryAfter: .seconds(86_400 * 30), expiresAt: nil, now: now),
                       .park(due: now.addingTimeInterval(600)), "a huge Retry-After is looked at again within ten minutes")
        XCTAssertEqual(policy.decideHeld(heldSince: now, credential: false, retryAfter: .seconds(-5), expiresAt: nil, now: now),
                       .park(due: now.addingTimeInterval(1)))
    }

    func testAHoldEndsAtItsLimitOrAtExpiry() {
        var policy = RetryPolicy()
        policy.maxHold = .seconds(3_600)
        policy.maxCredentialHold = .seconds(600)
        let longAgo = now.addingTimeInterval(-700)
        XCTAssertEqual(policy.decideHeld(heldSince: longAgo, credential: false, retryAfter: nil, expiresAt: nil, now: now),
                       .park(due: now.addingTimeInterval(1)), "an outage may hold it an hour")
        XCTAssertEqual(policy.decideHeld(heldSince: longAgo, credential: true, retryAfter: nil, expiresAt: nil, now: now),
                       .exhausted(limit: .seconds(600)), "a credential that cannot be had holds it ten minutes")
        XCTAssertEqual(policy.decideHeld(heldSince: now.addingTimeInterval(-3_600), credential: false, retryAfter: nil, expiresAt: nil, now: now),
                       .exhausted(limit: .seconds(3_600)))
        XCTAssertEqual(policy.decideHeld(heldSince: now, credential: false, retryAfter: .seconds(60),
                                         expiresAt: now.addingTimeInterval(30), now: now), .expired)
        XCTAssertEqual(policy.parkOwnership, .seconds(7_200), "the longest hold and an hour")
    }
}
