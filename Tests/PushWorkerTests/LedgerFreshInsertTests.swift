import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 18: a batch whose notification ids were new to the ledger at its
/// lookup is written with plain inserts; if rows for them turned up since (a
/// previous owner still writing after a rebalance), the write falls back to
/// the upsert, so the ledger's guarantees hold: a final status is never
/// overwritten, attempts add up, nothing is written twice.
final class LedgerFreshInsertTests: XCTestCase {
    static func record(_ key: DeliveryKey, _ status: DeliveryStatus, reason: String? = nil) -> DeliveryRecord {
        let now = Date()
        return DeliveryRecord(
            key: key, app: "com.example.fresh", platform: .ios, status: status, attempts: 1, providerStatus: status == .accepted ? 200 : 400,
            providerReason: reason, providerMessageID: status == .accepted ? "apns-id-1" : nil, detail: nil, enqueuedAt: now,
            firstAttemptAt: now, lastAttemptAt: now, acceptedAt: status == .accepted ? now : nil, finalAt: status.isFinal ? now : nil)
    }

    static func attempt(_ key: DeliveryKey, _ outcome: String) -> AttemptRecord {
        AttemptRecord(key: key, attempt: 1, attemptedAt: Date(), outcome: outcome, provider: .apns, providerStatus: 200,
                      providerReason: nil, latencyMilliseconds: 3.5)
    }

    func testRowsThatAppearedSinceTheLookupAreUpsertedNotDuplicatedOrOverwritten() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let id = UUID(), other = UUID()
        let createdAt = Date()
        let key = DeliveryKey(notificationID: id, token: String(repeating: "ab", count: 32), createdAt: createdAt)
        let otherKey = DeliveryKey(notificationID: other, token: String(repeating: "cd", count: 32), createdAt: createdAt)

        // The first writer: a new id, plain inserts.
        var first = BatchOutcome(deliveries: [Self.record(key, .accepted)], attempts: [Self.attempt(key, "accepted")])
        first.idsNewToLedger = [id]
        try await store.writer.write(first)

        // A second writer that looked the id up before the first wrote it: its plain
        // insert meets the row (23505) and the batch is written with the upsert instead.
        var second = BatchOutcome(deliveries: [Self.record(key, .rejected, reason: "BadDeviceToken"), Self.record(otherKey, .accepted)],
                                  attempts: [Self.attempt(key, "rejected"), Self.attempt(otherKey, "accepted")])
        second.idsNewToLedger = [id, other]
        try await store.writer.write(second)

        let row = try await db.row("SELECT status, attempts, provider_reason FROM deliveries WHERE notification_id = $1", [.uuid(id)])
        XCTAssertEqual(row["status"], "accepted", "a final status is never overwritten")
        XCTAssertEqual(row["attempts"], "2")
        XCTAssertNil(row["provider_reason"])
        let counts = try await db.row("""
            SELECT (SELECT count(*) FROM deliveries) AS deliveries, (SELECT count(*) FROM delivery_attempts) AS attempts,
                   (SELECT count(*) FROM notification_ids) AS ids
            """)
        XCTAssertEqual(counts["deliveries"], "2")
        XCTAssertEqual(counts["attempts"], "3", "the refused statement left nothing behind; each attempt is written once")
        XCTAssertEqual(counts["ids"], "2")
    }
}
