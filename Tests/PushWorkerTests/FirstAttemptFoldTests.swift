import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 18, migration 0012: a first try that ends its delivery is kept on
/// the delivery row instead of a `delivery_attempt_log` row, and the
/// `delivery_attempts` view still shows one row per provider request, the
/// same as a logged attempt would read.
final class FirstAttemptFoldTests: XCTestCase {
    static let at = Date(timeIntervalSince1970: 1_795_774_400.25)

    static func key(_ n: Int) -> DeliveryKey {
        DeliveryKey(notificationID: UUID(), token: String(format: "%064x", n), createdAt: at)
    }

    static func delivery(_ key: DeliveryKey, _ status: DeliveryStatus, providerStatus: Int?, reason: String? = nil,
                         attempts: Int = 1, platform: Platform = .ios) -> DeliveryRecord {
        DeliveryRecord(
            key: key, app: "com.example.fold", platform: platform, status: status, attempts: attempts,
            providerStatus: providerStatus, providerReason: reason, providerMessageID: status == .accepted ? "m-\(key.token.suffix(4))" : nil,
            detail: nil, enqueuedAt: at, firstAttemptAt: attempts > 0 ? at : nil, lastAttemptAt: attempts > 0 ? at : nil,
            acceptedAt: status == .accepted ? at : nil, finalAt: status.isFinal ? at : nil)
    }

    static func attempt(_ key: DeliveryKey, _ outcome: String, status: Int?, reason: String? = nil, number: Int = 1,
                        tier: String? = nil, latency: Double = 12.5, provider: Provider = .apns) -> AttemptRecord {
        AttemptRecord(key: key, attempt: number, attemptedAt: at, outcome: outcome, provider: provider, providerStatus: status,
                      providerReason: reason, latencyMilliseconds: latency, tier: tier)
    }

    func testOnlyAFirstTryThatEndsItsDeliveryIsFolded() {
        let accepted = Self.key(1), dead = Self.key(2), refused = Self.key(3), retrying = Self.key(4)
        let fromTier = Self.key(5), twice = Self.key(6), noRequest = Self.key(7), odd = Self.key(8), nan = Self.key(9)
        let deliveries = [
            Self.delivery(accepted, .accepted, providerStatus: 200),
            Self.delivery(dead, .invalidToken, providerStatus: 410, reason: "Unregistered"),
            Self.delivery(refused, .rejected, providerStatus: 400, reason: "BadDeviceToken"),
            Self.delivery(retrying, .retrying, providerStatus: 503, reason: "ServiceUnavailable"),
            Self.delivery(fromTier, .accepted, providerStatus: 200),
            Self.delivery(twice, .accepted, providerStatus: 200, attempts: 2),
            Self.delivery(noRequest, .rejected, providerStatus: nil, reason: "InvalidSubscriptionKeys", attempts: 0),
            // The row says another reason than the attempt: the view would read it back wrong.
            Self.delivery(odd, .rejected, providerStatus: 400, reason: "BadTopic"),
            Self.delivery(nan, .accepted, providerStatus: 200),
        ]
        let attempts = [
            Self.attempt(accepted, "accepted", status: 200, latency: 7.25),
            Self.attempt(dead, "invalid_token", status: 410, reason: "Unregistered", latency: 9),
            Self.attempt(refused, "rejected", status: 400, reason: "BadDeviceToken", latency: 11),
            Self.attempt(retrying, "transient", status: 503, reason: "ServiceUnavailable"),
            Self.attempt(fromTier, "accepted", status: 200, number: 2, tier: "5s"),
            Self.attempt(twice, "transport_error", status: nil, reason: "Transport(28)"),
            Self.attempt(twice, "accepted", status: 200),
            Self.attempt(odd, "rejected", status: 400, reason: "BadDeviceToken"),
            Self.attempt(nan, "accepted", status: 200, latency: .nan),
        ]
        let (latencies, logged) = OutcomeWriter.foldFirstAttempts(deliveries: deliveries, attempts: attempts)
        XCTAssertEqual(latencies, [7.25, 9.0, 11.0, nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(logged.map(\.key), [retrying, fromTier, twice, twice, odd, nan])
    }

    func testTheViewShowsFoldedAndLoggedAttemptsAlikeAndTheUpsertFallbackLogsEverything() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger, workerID: "fold-worker-1")
        let accepted = Self.key(1), dead = Self.key(2), retrying = Self.key(3), web = Self.key(4)
        var batch = BatchOutcome(
            deliveries: [
                Self.delivery(accepted, .accepted, providerStatus: 200),
                Self.delivery(dead, .invalidToken, providerStatus: 410, reason: "Unregistered"),
                Self.delivery(retrying, .retrying, providerStatus: 503, reason: "ServiceUnavailable"),
                Self.delivery(web, .accepted, providerStatus: 201, platform: .web),
            ],
            attempts: [
                Self.attempt(accepted, "accepted", status: 200, latency: 7.25),
                Self.attempt(dead, "invalid_token", status: 410, reason: "Unregistered", latency: 9),
                Self.attempt(retrying, "transient", status: 503, reason: "ServiceUnavailable", latency: 30),
                Self.attempt(web, "accepted", status: 201, latency: 41, provider: .webpush),
            ])
        batch.idsNewToLedger = Set([accepted, dead, retrying, web].map(\.notificationID))
        try await store.writer.write(batch)

        let log = try await db.row("SELECT count(*) AS n, min(outcome) AS o FROM delivery_attempt_log")
        XCTAssertEqual(log["n"], "1", "only the transient attempt is logged")
        XCTAssertEqual(log["o"], "transient")
        let rows = try await db.connection.query(
            """
            SELECT token, attempt, outcome, provider, provider_status, provider_reason, latency_ms, worker, tier,
                   extract(epoch FROM attempted_at)::text AS at
            FROM delivery_attempts ORDER BY latency_ms
            """)
        XCTAssertEqual(rows.rows.map { $0["outcome"] }, ["accepted", "invalid_token", "transient", "accepted"])
        XCTAssertEqual(rows.rows.map { $0["provider"] }, ["apns", "apns", "apns", "webpush"])
        XCTAssertEqual(rows.rows.map { $0["provider_status"] }, ["200", "410", "503", "201"])
        XCTAssertEqual(rows.rows.map { $0["provider_reason"] }, [nil, "Unregistered", "ServiceUnavailable", nil])
        XCTAssertEqual(rows.rows.map { $0["latency_ms"] }, ["7.25", "9", "30", "41"])
        XCTAssertEqual(rows.rows.map { $0["worker"] }, Array(repeating: "fold-worker-1", count: 4))
        XCTAssertEqual(rows.rows.map { $0["attempt"] }, ["1", "1", "1", "1"])
        XCTAssertEqual(rows.rows.map { $0["tier"] }, [nil, nil, nil, nil])
        XCTAssertEqual(rows.rows.map { $0["at"] }, Array(repeating: "1795774400.250000", count: 4))
        XCTAssertEqual(rows.rows.map { $0["token"] }, [accepted, dead, retrying, web].map(\.token))

        // The analysts' views count every request, folded or logged.
        let latency = try await db.row("SELECT sum(attempts)::text AS n FROM attempt_latency_hourly")
        XCTAssertEqual(latency["n"], "4")
        let retries = try await db.row("SELECT sum(attempts)::text AS n, sum(accepted)::text AS ok FROM retry_attempts_daily")
        XCTAssertEqual(retries["n"], "4")
        XCTAssertEqual(retries["ok"], "2")

        // A receipt moves the row on to `delivered`; the attempt's outcome stays `accepted`.
        try await db.connection.query("UPDATE deliveries SET status = 'delivered', delivered_at = now() WHERE token = $1",
                                      [.text(accepted.token)])
        let moved = try await db.row("SELECT outcome FROM delivery_attempts WHERE token = $1", [.text(accepted.token)])
        XCTAssertEqual(moved["outcome"], "accepted")

        // A writer that looked the ids up before the rows existed: its plain insert meets
        // them (23505), and the upsert writes its attempts to the log (they are not first).
        var late = BatchOutcome(deliveries: [Self.delivery(dead, .invalidToken, providerStatus: 410, reason: "Unregistered")],
                                attempts: [Self.attempt(dead, "invalid_token", status: 410, reason: "Unregistered", latency: 50)])
        late.idsNewToLedger = [dead.notificationID]
        try await store.writer.write(late)
        let deadRows = try await db.connection.query(
            "SELECT latency_ms FROM delivery_attempts WHERE token = $1 ORDER BY latency_ms", [.text(dead.token)])
        XCTAssertEqual(deadRows.rows.map { $0["latency_ms"] }, ["9", "50"])
        let deadRow = try await db.row("SELECT attempts, first_attempt_latency_ms FROM deliveries WHERE token = $1", [.text(dead.token)])
        XCTAssertEqual(deadRow["attempts"], "2")
        XCTAssertEqual(deadRow["first_attempt_latency_ms"], "9", "the upsert leaves the first attempt where it is")

        // A worker of the previous release (rolling upgrade) inserts into the view: the row is logged.
        try await db.connection.query(
            """
            INSERT INTO delivery_attempts (notification_id, created_at, token, attempt, attempted_at, outcome, provider,
                provider_status, provider_reason, latency_ms, worker)
            VALUES ($1, $2, $3, 2, $2, 'accepted', 'apns', 200, NULL, 61, 'old-worker')
            """, [.uuid(retrying.notificationID), .timestamp(Self.at), .text(retrying.token)])
        let old = try await db.row("SELECT worker, latency_ms FROM delivery_attempt_log WHERE attempt = 2")
        XCTAssertEqual(old["worker"], "old-worker")
        XCTAssertEqual(old["latency_ms"], "61")
    }
}
