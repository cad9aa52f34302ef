import Foundation
import XCTest

@testable import PushWorker

/// Liveness and readiness rules, with a clock the test moves.
final class HealthStateTests: XCTestCase {
    func testStartsLiveButNotReady() {
        let clock = ManualInstant()
        let health = HealthState(livenessWindow: .seconds(30), now: { clock.now })
        XCTAssertTrue(health.isLive)
        XCTAssertFalse(health.isReady)
        let snapshot = health.snapshot()
        XCTAssertEqual(snapshot.partitionsAssigned, 0)
        XCTAssertFalse(snapshot.postgresReachable)
    }

    func testReadyNeedsPartitionsAndPostgres() {
        let clock = ManualInstant()
        let health = HealthState(now: { clock.now })
        health.setPartitionsAssigned(3)
        XCTAssertFalse(health.isReady, "no PostgreSQL yet")
        health.setPostgresReachable(true)
        XCTAssertTrue(health.isReady)
        health.setPartitionsAssigned(0)
        XCTAssertFalse(health.isReady, "all partitions revoked")
        XCTAssertTrue(health.isLive)
        health.setPartitionsAssigned(1)
        health.setPostgresReachable(false)
        XCTAssertFalse(health.isReady, "PostgreSQL lost")
        health.setPostgresReachable(true)
        XCTAssertTrue(health.isReady)
    }

    func testAWedgedPollLoopGoesNotLive() {
        let clock = ManualInstant()
        let health = HealthState(livenessWindow: .seconds(30), now: { clock.now })
        health.setPartitionsAssigned(2)
        health.setPostgresReachable(true)
        health.heartbeat()
        clock.advance(.seconds(30))
        XCTAssertTrue(health.isLive, "exactly the window is still live")
        clock.advance(.milliseconds(1))
        XCTAssertFalse(health.isLive)
        XCTAssertFalse(health.isReady, "not live means not ready")
        health.heartbeat()
        XCTAssertTrue(health.isLive)
        XCTAssertTrue(health.isReady)
    }

    func testStartGraceIsOneWindow() {
        let clock = ManualInstant()
        let health = HealthState(livenessWindow: .seconds(10), now: { clock.now })
        clock.advance(.seconds(11))
        XCTAssertFalse(health.isLive, "a loop that never beat is not live after one window")
    }

    func testStoppingIsNeverReadyAgain() {
        let clock = ManualInstant()
        let health = HealthState(now: { clock.now })
        health.setPartitionsAssigned(1)
        health.setPostgresReachable(true)
        health.markStopping()
        XCTAssertFalse(health.isReady)
        XCTAssertTrue(health.isLive)
        XCTAssertTrue(health.snapshot().json().contains("\"stopping\":true"))
    }

    func testJSONBodyNamesWhatIsMissing() throws {
        let snapshot = HealthSnapshot(partitionsAssigned: 0, postgresReachable: false,
                                      sinceLastBeat: .milliseconds(1500), livenessWindow: .seconds(30))
        let data = Data(snapshot.json().utf8)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["ready"] as? Bool, false)
        XCTAssertEqual(object["live"] as? Bool, true)
        XCTAssertEqual(object["partitions_assigned"] as? Int, 0)
        XCTAssertEqual(object["postgres"] as? String, "unreachable")
        XCTAssertEqual(object["last_heartbeat_seconds_ago"] as? Double, 1.5)
        XCTAssertEqual(object["stopping"] as? Bool, false, "every key always present: one shape")
    }
}

/// The health JSON reports lanes, provider clients and the ledger's backlog
/// beside readiness, which they never change.
final class HealthDetailsTests: XCTestCase {
    func testDetailsAreReportedButNeverJudged() {
        let clock = ManualInstant()
        let health = HealthState(now: { clock.now })
        health.setPartitionsAssigned(4)
        health.setPostgresReachable(true)
        var details = HealthDetails()
        details.laneLag = [.bulk: 183_000]
        details.providers = [
            .init(provider: .fcm, app: "shop", host: "https://fcm.googleapis.com", circuit: "open",
                  lastSuccessSecondsAgo: 61.24, errorShare: nil),
            .init(provider: .apns, app: "sh\"op", host: "https://api.push.apple.com", circuit: "closed",
                  lastSuccessSecondsAgo: nil, errorShare: 0.25),
        ]
        details.unfinished = ["parked": 2_140, "retrying": 12]
        details.oldestUnfinishedSeconds = 64
        health.setDetails(details)
        XCTAssertTrue(health.isReady, "an open FCM circuit does not make the worker unready")
        let json = health.snapshot().json()
        let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        XCTAssertNotNil(parsed, "valid JSON, quotes in an app name escaped: \(json)")
        let lanes = parsed?["lanes"] as? [String: [String: Int]]
        XCTAssertEqual(lanes?["bulk"]?["lag"], 183_000)
        XCTAssertEqual(lanes?["interactive"]?["lag"], 0)
        let providers = parsed?["providers"] as? [[String: Any]]
        XCTAssertEqual(providers?.first?["circuit"] as? String, "open")
        XCTAssertEqual(providers?.first?["last_success_seconds_ago"] as? Double, 61.2)
        XCTAssertTrue(providers?.first?["error_share"] is NSNull)
        XCTAssertEqual(providers?.last?["app"] as? String, "sh\"op")
        XCTAssertEqual(providers?.last?["error_share"] as? Double, 0.25)
        let backlog = parsed?["backlog"] as? [String: Any]
        XCTAssertEqual((backlog?["unfinished"] as? [String: Int])?["parked"], 2_140)
        XCTAssertEqual(backlog?["oldest_unfinished_seconds"] as? Double, 64)
    }
}
