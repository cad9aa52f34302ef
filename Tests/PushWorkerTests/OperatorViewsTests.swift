import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 17: retries, rejections and dead letters each have a view, fed by
/// the worker's own writes (`OutcomeWriter.write`), with exact numbers.
final class OperatorViewsTests: XCTestCase {
    func testRetriesTiersAndDeadLettersAreAnswerableInSQL() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger, workerID: "w-views")
        let t = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 7_200).rounded(.down))
        func key(_ token: String) -> DeliveryKey { DeliveryKey(notificationID: UUID(), token: token, createdAt: t) }
        let once = key("once"), thrice = key("thrice"), dead = key("dead")
        func row(_ k: DeliveryKey, _ status: DeliveryStatus, attempts: Int, last: Double, detail: String? = nil, reason: String? = nil) -> DeliveryRecord {
            DeliveryRecord(key: k, app: "com.example.views", platform: .ios, status: status, attempts: attempts, providerStatus: nil,
                           providerReason: reason, providerMessageID: nil, detail: detail, enqueuedAt: t, firstAttemptAt: t,
                           lastAttemptAt: t.addingTimeInterval(last), acceptedAt: status == .accepted ? t.addingTimeInterval(last) : nil,
                           finalAt: t.addingTimeInterval(last))
        }
        func attempt(_ k: DeliveryKey, _ n: Int, _ outcome: String, tier: String?) -> AttemptRecord {
            AttemptRecord(key: k, attempt: n, attemptedAt: t.addingTimeInterval(Double(n)), outcome: outcome, provider: .apns,
                          providerStatus: outcome == "accepted" ? 200 : 503, providerReason: nil, latencyMilliseconds: 3, tier: tier)
        }
        try await store.writer.write(BatchOutcome(
            deliveries: [
                row(once, .accepted, attempts: 1, last: 0),
                row(thrice, .accepted, attempts: 3, last: 65),
                row(dead, .deadLettered, attempts: 5, last: 700, detail: "retries exhausted after attempt 5: ServiceUnavailable",
                    reason: "ServiceUnavailable"),
            ],
            attempts: [
                attempt(once, 1, "accepted", tier: nil),
                attempt(thrice, 1, "transient", tier: nil), attempt(thrice, 2, "transient", tier: "5s"), attempt(thrice, 3, "accepted", tier: "1m"),
                attempt(dead, 1, "transient", tier: nil), attempt(dead, 2, "transient", tier: "5s"),
            ],
            rejections: [IntakeRejection(notificationID: nil, app: nil, kind: "not_json", reason: "$: not JSON",
                                         topic: "push.notifications", partition: 0, offset: 7, fieldPath: "$")]))

        let retries = try await db.connection.query(
            "SELECT attempts, deliveries, accepted, dead_lettered, max_seconds_retrying FROM delivery_retries_daily ORDER BY attempts")
        XCTAssertEqual(retries.rows.map { "\($0["attempts"] ?? "")|\($0["deliveries"] ?? "")|\($0["accepted"] ?? "")|\($0["dead_lettered"] ?? "")|\($0["max_seconds_retrying"] ?? "")" },
                       ["1|1|1|0|0.000", "3|1|1|0|65.000", "5|1|0|1|700.000"])

        let tiers = try await db.connection.query("SELECT tier, attempts, accepted, failed_again FROM retry_attempts_daily ORDER BY tier")
        XCTAssertEqual(tiers.rows.map { "\($0["tier"] ?? "")|\($0["attempts"] ?? "")|\($0["accepted"] ?? "")|\($0["failed_again"] ?? "")" },
                       ["1m|1|1|0", "5s|2|0|2", "intake|3|1|2"])

        let dlq = try await db.connection.query("SELECT source, kind, messages, example_reason FROM dead_letters_daily ORDER BY source")
        XCTAssertEqual(dlq.rows.map { "\($0["source"] ?? "")|\($0["kind"] ?? "")|\($0["messages"] ?? "")|\($0["example_reason"] ?? "")" },
                       ["delivery|exhausted|1|retries exhausted after attempt 5: ServiceUnavailable", "intake|not_json|1|$: not JSON"])

        let accepted = try await db.connection.query("SELECT accepted, p99_seconds FROM delivery_accepted_hourly")
        XCTAssertEqual(accepted.rows.map { $0["accepted"] ?? "" }.reduce(0) { $0 + (Int($1) ?? 0) }, 2)

        let worker = try await db.row("SELECT DISTINCT worker FROM delivery_attempts")
        XCTAssertEqual(worker["worker"], "w-views")
        await pool.close()
    }

    /// A refused message's app is the producer's text, read before it was
    /// checked: its rejection row keeps 255 characters of it, not 200 KB.
    func testARejectionKeepsAnAppOfAtMostItsLimit() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger, workerID: "w-app")
        let long = String(repeating: "é", count: 100_000)
        guard case .failure(let error) = PushNotification.decode(Array(#"{"schema_version":1,"app":"\#(long)"}"#.utf8)) else {
            return XCTFail("decoded")
        }
        XCTAssertEqual(error.app, long, "the decoder names the app as given")
        try await store.writer.write(BatchOutcome(rejections: [
            IntakeRejection(notificationID: nil, app: error.app, kind: error.reason.rawValue, reason: error.detail,
                            topic: "push.notifications", partition: 0, offset: 11, fieldPath: error.fieldPath),
            IntakeRejection(notificationID: nil, app: "com.example.short", kind: "not_json", reason: "$: not JSON",
                            topic: "push.notifications", partition: 0, offset: 12),
            // One Character of 200 KB: cut by bytes, not by Characters.
            IntakeRejection(notificationID: nil, app: "a" + String(repeating: "\u{301}", count: 100_000), kind: "invalid_value",
                            reason: "x", topic: "push.notifications", partition: 0, offset: 13),
        ]))
        let rows = try await db.connection.query(
            "SELECT kafka_offset, octet_length(app) AS bytes, app, octet_length(reason) AS reason_bytes FROM intake_rejections ORDER BY kafka_offset")
        XCTAssertEqual(rows.rows.map { $0["bytes"] ?? "" }, ["255", "17", "254"])
        XCTAssertEqual(rows.rows.first?["app"], String(repeating: "é", count: 126) + "…", "255 bytes: 126 é and the …")
        XCTAssertLessThanOrEqual(Int(rows.rows.first?["reason_bytes"] ?? "") ?? .max, IntakeError.maxDetailBytes + 40)
        await pool.close()
    }
}
