import Foundation
import Logging
import PushCore
import PushPostgres
import PushTestSupport
import XCTest

/// No one's trouble is everyone's: a provider outage, one app's refused
/// key and a campaign each delay only their own deliveries, and a
/// fleet-wide quota is split between the replicas. Each test runs
/// `pushfleet demo` with steady traffic (two real worker processes, the
/// mock cluster, the simulator) and then reads PostgreSQL itself. They
/// assert who waited for whom, never how long anything took.
final class IsolationTests: XCTestCase {
    var logger: Logger {
        var l = Logger(label: "e2e.isolation")
        l.logLevel = .warning
        return l
    }

    /// Runs the demo against a database of its own, then `check` with its
    /// summary and a connection to that database.
    private func demo(deliveries: Int, _ arguments: [String],
                      check: (JSONValue, PostgresConnection) async throws -> Void) async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        do {
            let summary = try await TestEnvironment.runDemo(binary, database: database, deliveries: deliveries, extra: arguments)
            let connection = try await PostgresConnection.connect(url: database.url, logger: logger)
            defer { connection.close() }
            try await check(summary, connection)
        } catch {
            await database.drop(logger: logger)
            throw error
        }
        await database.drop(logger: logger)
    }

    /// FCM answers 503 to everything for 10 s of 15 s of steady traffic, and
    /// its circuit, with a 1 s cool-down, re-opens on every probe while the
    /// outage lasts. The iPhones, browsers and Huawei phones of
    /// notifications enqueued in the outage's first half have their outcome
    /// before it ends (an intake paused for FCM would hold them to its end);
    /// every Android delivery is parked, not sent, and accepted once FCM is
    /// back; nothing is lost or sent twice; a held delivery is parked once,
    /// and only the probes are parked again at each cool-down's end, not
    /// every held delivery.
    func testAnFCMOutageHoldsOnlyFCMDeliveriesParkedUntilFCMIsBack() async throws {
        let outageSeconds = 10.0, openSeconds = 1.0, workers = 2, probes = 3
        try await demo(deliveries: 360, [
            "--notifications", "300", "--publish-rate", "20", "--fcm-outage-start-seconds", "4",
            "--fcm-outage-seconds", "\(Int(outageSeconds))", "--circuit-open-ms", "\(Int(openSeconds * 1000))",
            "--retry-delay-ms", "300", "--max-attempts", "8",
        ]) { summary, c in
            let outage = try XCTUnwrap(summary.interval("outage"), "the summary names the outage")
            let firstHalf = outage.start.addingTimeInterval(outageSeconds / 2)
            let rows = try await c.query(
                """
                SELECT platform, count(*) AS n,
                       count(*) FILTER (WHERE final_at < $3) AS final_in_outage,
                       count(*) FILTER (WHERE accepted_at IS NOT NULL) AS accepted,
                       count(*) FILTER (WHERE accepted_at < $3) AS accepted_in_outage
                FROM deliveries WHERE app = 'com.pushfleet.demo'
                  AND coalesce(enqueued_at, created_at) >= $1 AND coalesce(enqueued_at, created_at) < $2
                GROUP BY platform
                """, [.timestamp(outage.start), .timestamp(firstHalf), .timestamp(outage.end)])
            var byPlatform: [String: PostgresRow] = [:]
            for row in rows.rows { byPlatform[row["platform"] ?? "?"] = row }
            for platform in ["ios", "web", "huawei"] {
                let row = try XCTUnwrap(byPlatform[platform], "\(platform) deliveries enqueued in the outage")
                XCTAssertEqual(row.count("final_in_outage"), row.count("n"),
                               "every \(platform) delivery enqueued in the outage's first half had its outcome before the outage ended")
            }
            XCTAssertGreaterThanOrEqual(byPlatform["ios"]?.count("accepted_in_outage") ?? 0, 20, "iPhones kept receiving during the outage")
            let android = try XCTUnwrap(byPlatform["android"])
            XCTAssertGreaterThan(android.count("accepted") ?? 0, 0)
            XCTAssertEqual(android.count("accepted_in_outage"), 0, "FCM accepted nothing while it answered 503")

            // Every delivery ends as without the outage (the demo compared them): nothing
            // lost, no Android delivery ran out of attempts.
            let expected = summary.counts("expected")
            XCTAssertEqual(summary.counts("actual"), expected)
            XCTAssertNil(expected["android|dead_lettered"])
            XCTAssertNil(summary.counts("dead_letters")["exhausted"], "no delivery ran out of attempts")
            XCTAssertEqual(summary.int("apns_accepted_twice"), 0)
            XCTAssertEqual(summary.int("fcm_accepted_twice"), 0)
            XCTAssertEqual(summary.int("simulator_apns_duplicate_ids"), 0)

            // Parked, not sent: every attempt FCM answered 503 is one the simulator counted, so
            // no parked send became a request or spent an attempt.
            let fcm503 = try await c.query(
                "SELECT count(*) AS n FROM delivery_attempts WHERE provider = 'fcm' AND provider_status = 503").rows[0]
            XCTAssertEqual(fcm503.count("n"), summary.int("simulator_fcm_503"), "each FCM 503 is one attempt, and only those")
            let parked = try XCTUnwrap(summary.int("parked_messages"))
            let held = try XCTUnwrap(summary.int("parked_held_deliveries"))
            XCTAssertGreaterThan(held, 0, "Android deliveries were parked while FCM's circuit was open")
            // Parked once, and the probes again each cool-down: each worker's circuit lets three
            // parked messages back per cool-down, not all of them (that would be `held` per cool-down).
            let coolDowns = Int(outageSeconds / openSeconds) + 2
            let bound = held + coolDowns * probes * workers
            XCTAssertLessThanOrEqual(parked, bound, "\(held) held deliveries parked once, plus the probes of \(coolDowns) cool-downs")
            print("outage: \(held) held deliveries in \(parked) parked messages, \(summary.int("retry_messages") ?? -1) retry-topic messages, \(summary.int("simulator_fcm_503") ?? 0) FCM 503s")
        }
    }

    /// A second app's APNs key is refused by Apple (403 InvalidProviderToken)
    /// while the demo app sends: the demo app's iPhones get every
    /// notification, before, while and after the other app's traffic; the
    /// other app's deliveries fail on their own and end dead-lettered.
    func testAnAppWhoseAPNsKeyIsRefusedHoldsBackOnlyItsOwnDeliveries() async throws {
        try await demo(deliveries: 200, [
            "--notifications", "120", "--publish-rate", "20", "--refused-apns-key", "40",
            "--retry-delay-ms", "300", "--max-attempts", "3",
        ]) { summary, c in
            let byApp = summary.counts("by_app")
            XCTAssertEqual(byApp["com.pushfleet.legacy|ios|dead_lettered"], 40, "\(byApp)")
            let window = try XCTUnwrap(summary.interval("with_refused_key"))
            let refused = try await c.query(
                """
                SELECT count(*) AS n, min(attempts) AS min_attempts, max(attempts) AS max_attempts,
                       count(*) FILTER (WHERE provider_status = 403 AND provider_reason = 'InvalidProviderToken') AS refused
                FROM deliveries WHERE app = 'com.pushfleet.legacy'
                """).rows[0]
            XCTAssertEqual(refused.count("n"), 40)
            XCTAssertEqual(refused.count("refused"), 40, "each ends with Apple's 403 InvalidProviderToken")
            XCTAssertEqual(refused.count("min_attempts"), 3)
            XCTAssertEqual(refused.count("max_attempts"), 3)
            let healthy = try await c.query(
                """
                SELECT count(*) AS n, count(*) FILTER (WHERE accepted_at IS NOT NULL) AS accepted,
                       count(*) FILTER (WHERE status IN ('invalid_token', 'rejected')) AS dead_or_malformed
                FROM deliveries WHERE app = 'com.pushfleet.demo' AND platform = 'ios'
                  AND coalesce(enqueued_at, created_at) >= $1 AND coalesce(enqueued_at, created_at) <= $2
                """, [.timestamp(window.start), .timestamp(window.end)]).rows[0]
            XCTAssertGreaterThanOrEqual(healthy.count("n") ?? 0, 10, "the demo app sent to iPhones beside the refused app")
            XCTAssertEqual((healthy.count("accepted") ?? 0) + (healthy.count("dead_or_malformed") ?? 0), healthy.count("n"),
                           "every live iPhone token of the demo app was accepted while the other app's key was refused")
            let crossed = try await c.query(
                """
                SELECT count(*) AS n FROM delivery_attempts a JOIN deliveries d USING (notification_id, token)
                WHERE d.app = 'com.pushfleet.demo' AND a.provider_status = 403
                """).rows[0]
            XCTAssertEqual(crossed.count("n"), 0, "no demo app request was refused")
            XCTAssertEqual(summary.counts("actual"), summary.counts("expected"))
        }
    }

    /// A campaign's backlog on the bulk lane does not queue the interactive
    /// lane: notifications published while at least 60 % of the backlog was
    /// still to go are accepted while at least 20 % still is (one intake
    /// topic would serve them after the backlog ahead of them, when next to
    /// nothing is left).
    func testInteractiveNotificationsOvertakeABulkBacklog() async throws {
        // worker.max_in_flight 128 (of 1,024) keeps little of the backlog in flight ahead of the
        // interactive sends, so a backlog that drains in seconds suffices here.
        let backlog = 4_000
        try await demo(deliveries: backlog + 150, [
            "--notifications", "120", "--publish-rate", "40", "--bulk-backlog", "\(backlog)", "--max-in-flight", "128",
        ]) { summary, c in
            XCTAssertEqual(summary.counts("by_app")["com.pushfleet.news|ios|accepted"], backlog / 2)
            XCTAssertEqual(summary.counts("by_app")["com.pushfleet.news|android|accepted"], backlog / 2)
            // Backlog still to go at t: the campaign's deliveries not final by then.
            let rows = try await c.query(
                """
                WITH i AS (SELECT coalesce(enqueued_at, created_at) AS enq, accepted_at FROM deliveries
                           WHERE app = 'com.pushfleet.demo' AND accepted_at IS NOT NULL)
                SELECT $1 - (SELECT count(*) FROM deliveries b WHERE b.app = 'com.pushfleet.news' AND b.final_at <= i.enq) AS at_enqueue,
                       $1 - (SELECT count(*) FROM deliveries b WHERE b.app = 'com.pushfleet.news' AND b.final_at <= i.accepted_at) AS at_accept
                FROM i
                """, [.int(Int64(backlog))])
            let behind = rows.rows.compactMap { row -> (enqueue: Int, accept: Int)? in
                guard let e = row.count("at_enqueue"), let a = row.count("at_accept") else { return nil }
                return (e, a)
            }.filter { $0.enqueue >= backlog * 6 / 10 }
            XCTAssertGreaterThanOrEqual(behind.count, 10,
                                        "interactive deliveries published while at least 60 % of the backlog was to go (a bigger backlog is needed if not)")
            let queued = behind.filter { $0.accept < backlog / 5 }
            XCTAssertEqual(queued.count, 0, "accepted while at least 20 % of the backlog was still to go: \(queued.prefix(5))")
            print("lanes: \(behind.count) interactive deliveries enqueued with ≥ 60 % of the backlog to go; at their acceptance at least \(behind.map(\.accept).min() ?? -1) of \(backlog) were")
            XCTAssertEqual(summary.counts("actual"), summary.counts("expected"))
        }
    }

    /// A fleet-wide FCM quota is split between the two workers by their
    /// share of the lanes' intake partitions: each takes a part, and the
    /// parts add up to the whole quota, not to twice it.
    func testAFleetWideQuotaIsSharedByTheWorkers() async throws {
        try await demo(deliveries: 80, ["--notifications", "60", "--publish-rate", "30", "--fcm-fleet-quota", "40"]) { summary, _ in
            guard case .object(let members)? = summary["quota_shares"] else { return XCTFail("no quota shares in the summary") }
            let shares = members.compactMap { _, value -> Double? in if case .double(let d) = value { return d }; return nil }
            XCTAssertEqual(shares.count, 2, "each worker reports its share: \(members)")
            for share in shares { XCTAssertGreaterThan(share, 0, "\(members)") }
            XCTAssertEqual(shares.reduce(0, +), 1, accuracy: 1e-9, "the shares add up to the fleet's quota: \(members)")
            XCTAssertEqual(summary.counts("actual"), summary.counts("expected"))
        }
    }
}

extension JSONValue {
    /// A phase of the summary's timeline (`[start, end]`, seconds since 1970).
    func interval(_ name: String) -> DateInterval? {
        guard case .array(let bounds)? = self["timeline"]?[name], bounds.count == 2,
              case .double(let start) = bounds[0], case .double(let end) = bounds[1], end >= start else { return nil }
        return DateInterval(start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end))
    }
}
