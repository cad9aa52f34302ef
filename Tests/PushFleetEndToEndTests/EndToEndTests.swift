import Foundation
import Logging
import PushCore
import PushPostgres
import PushTestSupport
import XCTest

/// Runs `pushfleet demo` (mock Kafka with 3 brokers, the simulator, two real
/// worker processes) against a fresh database, then checks PostgreSQL itself.
final class EndToEndTests: XCTestCase {
    var logger: Logger {
        var l = Logger(label: "e2e")
        l.logLevel = .warning
        return l
    }

    func testTheSliceDeliversEverythingAndRecordsEveryOutcome() async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        do {
            try await checkSlice(database: database, binary: binary)
        } catch {
            await database.drop(logger: logger)
            throw error
        }
        await database.drop(logger: logger)
    }

    func checkSlice(database: TestDatabase, binary: String) async throws {

        let summaryPath = NSTemporaryDirectory() + "e2e-summary-\(UUID().uuidString).json"
        let workDir = NSTemporaryDirectory() + "e2e-work-\(UUID().uuidString)"
        let notifications = 400
        let timeout = TestEnvironment.demoTimeout(deliveries: notifications * 6 / 5)
        let run = try await TestEnvironment.run(binary, [
            "demo", "--database-url", database.url, "--notifications", "\(notifications)", "--workers", "2",
            "--timeout", "\(timeout)", "--summary-json", summaryPath, "--work-dir", workDir, "--log-level", "warning",
        ], timeout: .seconds(timeout + 120))
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: workDir))?.filter { $0.hasSuffix(".log") }
            .map { (try? String(contentsOfFile: workDir + "/" + $0, encoding: .utf8)) ?? "" }.joined(separator: "\n") ?? ""
        XCTAssertEqual(run.status, 0, "demo failed:\n\(run.output.suffix(4000))\nworker logs:\n\(logs.suffix(6000))")
        try? FileManager.default.removeItem(atPath: workDir)

        let summary = try JSONValue.parse(Array(Data(contentsOf: URL(fileURLWithPath: summaryPath))))
        try? FileManager.default.removeItem(atPath: summaryPath)
        guard case .object(let expectedMembers)? = summary["expected"] else { return XCTFail("no expected counts in summary") }
        var expected: [String: Int] = [:]
        for (key, value) in expectedMembers { if case .int(let n) = value { expected[key] = Int(n) } }
        let expectedTotal = expected.values.reduce(0, +)
        XCTAssertGreaterThanOrEqual(expectedTotal, notifications, "every notification has at least one device")
        func sent(_ platform: String) -> Int {
            ["accepted", "delivered", "opened"].reduce(0) { $0 + (expected["\(platform)|\($1)"] ?? 0) }
        }
        for platform in ["ios", "android", "web", "huawei"] {
            XCTAssertGreaterThan(sent(platform), 0, "\(platform) deliveries accepted")
        }
        XCTAssertGreaterThan((expected["ios|invalid_token"] ?? 0) + (expected["android|invalid_token"] ?? 0), 0)
        XCTAssertGreaterThan((expected["web|invalid_token"] ?? 0) + (expected["huawei|invalid_token"] ?? 0), 0)
        XCTAssertGreaterThan((expected["ios|rejected"] ?? 0) + (expected["android|rejected"] ?? 0), 0)
        XCTAssertGreaterThan((expected["web|rejected"] ?? 0) + (expected["huawei|rejected"] ?? 0), 0)
        // Every accepted Web Push message was opened by the simulator with the subscription's private key.
        XCTAssertEqual(summary.int("web_push_decrypted"), sent("web"), "each accepted web push decrypted once")

        // Now PostgreSQL, read directly.
        let c = try await PostgresConnection.connect(url: database.url, logger: logger)
        defer { c.close() }
        var actual: [String: Int] = [:]
        for row in try await c.query("SELECT platform, status, count(*) AS n FROM deliveries GROUP BY 1, 2").rows {
            actual["\(row["platform"] ?? "")|\(row["status"] ?? "")"] = row.count("n")
        }
        XCTAssertEqual(actual, expected, "deliveries per platform × status")

        let checks = try await c.query(
            """
            SELECT
              (SELECT count(*) FROM deliveries WHERE status = 'accepted' AND (provider_message_id IS NULL OR attempts < 1 OR accepted_at IS NULL)) AS bad_accepted,
              (SELECT count(*) FROM deliveries WHERE status = 'invalid_token' AND NOT (provider_status IN (410, 404)
                   OR (platform = 'huawei' AND provider_status = 200))) AS bad_invalid,
              (SELECT count(*) FROM deliveries WHERE status = 'rejected' AND provider_reason IS NULL) AS rejected_without_reason,
              (SELECT count(*) FROM deliveries WHERE status = 'rejected' AND attempts > 0) AS rejected_after_send,
              (SELECT count(*) FROM deliveries WHERE final_at IS NULL) AS not_final,
              (SELECT count(DISTINCT notification_id) FROM deliveries) AS notifications,
              (SELECT count(*) FROM delivery_attempts) AS attempts,
              (SELECT count(*) FROM deliveries WHERE status IN ('accepted', 'invalid_token')) AS sent,
              (SELECT count(*) FROM devices WHERE invalidated_at IS NOT NULL) AS invalidated,
              (SELECT count(*) FROM intake_rejections) AS rejections,
              (SELECT count(DISTINCT kind) FROM intake_rejections) AS rejection_kinds
            """).rows[0]
        XCTAssertEqual(checks.count("bad_accepted"), 0, "accepted rows need a provider message id, an attempt and accepted_at")
        XCTAssertEqual(checks.count("bad_invalid"), 0, "invalid tokens come from APNs 410 / FCM 404 / Web Push 410 / Push Kit 80300007")
        XCTAssertEqual(checks.count("rejected_without_reason"), 0)
        XCTAssertEqual(checks.count("rejected_after_send"), 0, "malformed tokens are rejected before any send")
        XCTAssertEqual(checks.count("not_final"), 0)
        XCTAssertEqual(checks.count("notifications"), notifications, "no notification missing")
        XCTAssertGreaterThanOrEqual(checks.count("attempts") ?? 0, checks.count("sent") ?? .max, "one attempt row per send at least")
        let deadTokens = expected.filter { $0.key.hasSuffix("|invalid_token") }.values.reduce(0, +)
        XCTAssertEqual(checks.count("invalidated"), deadTokens, "every dead token invalidated in devices")
        XCTAssertEqual(checks.count("rejections"), summary.int("expected_rejections"))
        XCTAssertEqual(summary.counts("dead_letters").values.reduce(0, +), summary.int("expected_rejections"),
                       "every invalid message is on push.dlq, nothing else is")
        XCTAssertEqual(checks.count("rejection_kinds"), 3, "undecodable, invalid and unsupported_schema_version are each recorded")

        let reasons = try await c.query("SELECT DISTINCT provider_reason FROM deliveries WHERE status = 'invalid_token' ORDER BY 1").rows.compactMap { $0[0] }
        XCTAssertEqual(Set(reasons), ["Unregistered", "UNREGISTERED", "Gone", "80300007"])
        // Keys no browser made are refused when sealing, a Push Kit alert without a body at translation
        // (a malformed Push Kit token never gets this far: intake refuses it).
        let misreasoned = try await c.query(
            """
            SELECT count(*) AS n FROM deliveries WHERE status = 'rejected'
              AND ((platform = 'web' AND provider_reason <> 'InvalidSubscriptionKeys') OR (platform = 'huawei' AND provider_reason <> 'IncompleteAlert'))
            """).rows[0]
        XCTAssertEqual(misreasoned.count("n"), 0, "web rejections are InvalidSubscriptionKeys, huawei ones IncompleteAlert")
    }
}

extension EndToEndTests {
    /// 503s for the first APNs requests pass through the retry tiers and end
    /// accepted; FCM failing every time ends dead-lettered after the maximum
    /// attempts, with one push.dlq message per notification.
    func testTransientFailuresRetryThroughTiersAndExhaustedOnesAreDeadLettered() async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        do {
            let summary = try await TestEnvironment.runDemo(binary, database: database, deliveries: 180, extra: [
                "--notifications", "150", "--apns-503-first", "40", "--fcm-always-503",
                "--retry-delay-ms", "300", "--max-attempts", "3",
            ])
            let expected = summary.counts("expected")
            XCTAssertGreaterThan(expected["ios|accepted"] ?? 0, 0)
            XCTAssertGreaterThan(expected["android|dead_lettered"] ?? 0, 0)
            XCTAssertNil(expected["android|accepted"])

            let c = try await PostgresConnection.connect(url: database.url, logger: logger)
            defer { c.close() }
            var actual: [String: Int] = [:]
            for row in try await c.query("SELECT platform, status, count(*) AS n FROM deliveries GROUP BY 1, 2").rows {
                actual["\(row["platform"] ?? "")|\(row["status"] ?? "")"] = row.count("n")
            }
            XCTAssertEqual(actual, expected)
            let r = try await c.query(
                """
                SELECT
                  (SELECT count(*) FROM (SELECT notification_id, token FROM delivery_attempts
                     WHERE provider = 'apns' GROUP BY 1, 2
                     HAVING bool_or(outcome = 'transient') AND bool_or(outcome IN ('accepted', 'invalid_token'))) x) AS ios_recovered,
                  (SELECT count(DISTINCT (notification_id, token)) FROM delivery_attempts
                     WHERE provider = 'apns' AND outcome = 'transient') AS ios_503_deliveries,
                  (SELECT count(*) FROM delivery_attempts WHERE provider = 'apns' AND outcome = 'transient') AS apns_503,
                  (SELECT min(attempts) FROM deliveries WHERE status = 'dead_lettered') AS min_dlq_attempts,
                  (SELECT max(attempts) FROM deliveries WHERE status = 'dead_lettered') AS max_dlq_attempts,
                  (SELECT count(*) FROM deliveries WHERE status = 'dead_lettered'
                     AND provider_reason NOT IN ('UNAVAILABLE', 'CircuitOpen')) AS dlq_other_reason,
                  (SELECT string_agg(DISTINCT provider_reason, ',') FROM deliveries WHERE status = 'dead_lettered') AS dlq_reasons
                """).rows[0]
            XCTAssertEqual(r.count("apns_503"), 40, "exactly the first 40 APNs requests got 503")
            // Which requests are the first 40 depends on timing: on a slow machine a retry can come
            // round while intake is still sending, and one delivery may get two of the 503s.
            XCTAssertEqual(r.count("ios_recovered"), r.count("ios_503_deliveries"),
                           "each delivery that got a 503 was retried from a retry topic and then answered")
            XCTAssertGreaterThanOrEqual(r.count("ios_recovered") ?? 0, 20, "at most two 503s per delivery before its last attempt")
            XCTAssertEqual(r.count("min_dlq_attempts"), 3)
            XCTAssertEqual(r.count("max_dlq_attempts"), 3)
            // The last attempt of a delivery to an always-failing FCM ends with its 503 reason,
            // or with the open circuit breaker that 503s tripped (the request then is not sent).
            XCTAssertEqual(r.count("dlq_other_reason"), 0, "dead-letter reasons: \(r["dlq_reasons"] ?? "-")")
            XCTAssertEqual(summary.counts("dead_letters")["exhausted"], summary.int("expected_exhausted"))
            XCTAssertGreaterThan(summary.int("expected_exhausted") ?? 0, 0)
        } catch {
            await database.drop(logger: logger)
            throw error
        }
        await database.drop(logger: logger)
    }
}
