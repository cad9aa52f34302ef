import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Receipts against the ledger, with the outcomes written by the real
/// `WorkerStores` (its exact UPSERT), in both orders.
final class ReceiptStoreTests: XCTestCase {
    let created = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))

    private func record(_ key: DeliveryKey, _ status: DeliveryStatus, acceptedAt: Date? = nil) -> DeliveryRecord {
        DeliveryRecord(key: key, app: "com.example.shop", platform: .ios, status: status, attempts: 1,
                       providerStatus: status == .accepted ? 200 : 410, providerReason: status == .accepted ? nil : "Unregistered",
                       providerMessageID: nil, detail: nil, enqueuedAt: created, firstAttemptAt: created,
                       lastAttemptAt: created, acceptedAt: acceptedAt, finalAt: status.isFinal ? created : nil)
    }

    private func receipt(_ key: DeliveryKey, _ kind: Receipt.Kind, after seconds: Double) -> Receipt {
        Receipt(notificationID: key.notificationID, token: key.token, app: "com.example.shop", platform: .ios,
                kind: kind, at: created.addingTimeInterval(seconds))
    }

    private func state(_ db: MigratedDatabase, _ key: DeliveryKey) async throws -> (status: String, delivered: Date?, opened: Date?) {
        let rows = try await db.connection.query(
            "SELECT status, delivered_at, opened_at FROM deliveries WHERE notification_id = $1 AND token = $2",
            [.uuid(key.notificationID), .text(key.token)])
        let row = try XCTUnwrap(rows.first)
        return (row["status"] ?? "", try row.date("delivered_at"), try row.date("opened_at"))
    }

    func testReceiptBeforeOutcomeIsPickedUpAndStatusNeverGoesBack() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let receipts = ReceiptStore(pool: pool)
        let key = DeliveryKey(notificationID: UUID(), token: "tok-early", createdAt: created)

        // The device answers before the worker has written anything.
        let applied = try await receipts.apply([receipt(key, .delivered, after: 2)])
        XCTAssertEqual(applied, ReceiptStore.Applied(newReceipts: 1, matchedDeliveries: 0))
        // First outcome write: a retry in progress; the stored receipt is merged by the trigger.
        try await outcomes.writer.write(BatchOutcome(deliveries: [record(key, .retrying)]))
        var s = try await state(db, key)
        XCTAssertEqual(s.status, "delivered")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(2))
        // The provider's acceptance arrives later: 'accepted' must not overwrite 'delivered'.
        try await outcomes.writer.write(BatchOutcome(deliveries: [record(key, .accepted, acceptedAt: created.addingTimeInterval(1))]))
        s = try await state(db, key)
        XCTAssertEqual(s.status, "delivered")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(2))
        await pool.close()
    }

    func testReceiptsAfterAcceptanceMoveForwardIdempotently() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let receipts = ReceiptStore(pool: pool)
        let key = DeliveryKey(notificationID: UUID(), token: "tok-late", createdAt: created)
        try await outcomes.writer.write(BatchOutcome(deliveries: [record(key, .accepted, acceptedAt: created)]))

        var applied = try await receipts.apply([receipt(key, .delivered, after: 3)])
        XCTAssertEqual(applied, ReceiptStore.Applied(newReceipts: 1, matchedDeliveries: 1))
        var s = try await state(db, key)
        XCTAssertEqual(s.status, "delivered")

        // The opened receipt, the same opened receipt again and a duplicate in one batch.
        applied = try await receipts.apply([receipt(key, .opened, after: 9), receipt(key, .opened, after: 9)])
        XCTAssertEqual(applied.newReceipts, 1)
        s = try await state(db, key)
        XCTAssertEqual(s.status, "opened")
        XCTAssertEqual(s.opened, created.addingTimeInterval(9))
        // A late duplicate 'delivered' (later time) changes nothing; an earlier one wins.
        applied = try await receipts.apply([receipt(key, .delivered, after: 5)])
        XCTAssertEqual(applied, ReceiptStore.Applied(newReceipts: 0, matchedDeliveries: 0))
        s = try await state(db, key)
        XCTAssertEqual(s.status, "opened")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(3))
        // A replayed outcome write of 'accepted' keeps 'opened'.
        try await outcomes.writer.write(BatchOutcome(deliveries: [record(key, .accepted, acceptedAt: created)]))
        s = try await state(db, key)
        XCTAssertEqual(s.status, "opened")
        let count = try await db.row("SELECT count(*) AS n FROM delivery_receipts")
        XCTAssertEqual(count["n"], "2")
        await pool.close()
    }

    func testReceiptOnAFailedDeliveryRecordsTheTimeOnly() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let key = DeliveryKey(notificationID: UUID(), token: "tok-dead", createdAt: created)
        try await outcomes.writer.write(BatchOutcome(deliveries: [record(key, .invalidToken)]))
        let applied = try await ReceiptStore(pool: pool).apply([receipt(key, .opened, after: 4)])
        XCTAssertEqual(applied.matchedDeliveries, 1)
        let s = try await state(db, key)
        XCTAssertEqual(s.status, "invalid_token")
        XCTAssertEqual(s.opened, created.addingTimeInterval(4))
        XCTAssertEqual(s.delivered, created.addingTimeInterval(4), "an open implies a delivery")
        await pool.close()
    }

    func testManyReceiptsInOneBatch() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let keys = (0..<300).map { DeliveryKey(notificationID: UUID(), token: "t\($0)", createdAt: created) }
        try await outcomes.writer.write(BatchOutcome(deliveries: keys.prefix(200).map { record($0, .accepted, acceptedAt: created) }))
        let batch = keys.map { receipt($0, .delivered, after: 1) } + keys.prefix(50).map { receipt($0, .opened, after: 2) }
        let applied = try await ReceiptStore(pool: pool).apply(batch)
        XCTAssertEqual(applied, ReceiptStore.Applied(newReceipts: 350, matchedDeliveries: 200))
        // The 100 receipts without a row yet land when their outcomes arrive.
        try await outcomes.writer.write(BatchOutcome(deliveries: keys.suffix(100).map { record($0, .accepted, acceptedAt: created) }))
        let counts = try await db.row(
            "SELECT count(*) FILTER (WHERE status = 'delivered') AS d, count(*) FILTER (WHERE status = 'opened') AS o, count(delivered_at) AS da FROM deliveries")
        XCTAssertEqual(counts["d"], "250")
        XCTAssertEqual(counts["o"], "50")
        XCTAssertEqual(counts["da"], "300")
        await pool.close()
    }

    /// One outcome statement mixing rows with and without earlier receipts: the
    /// per-statement merge (migration 0004) gives each row exactly what the
    /// per-row trigger gave it.
    func testEarlyReceiptsMergeIntoAMixedOutcomeBatch() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let key = { (token: String) in DeliveryKey(notificationID: UUID(), token: token, createdAt: self.created) }
        let both = key("tok-both"), openedOnly = key("tok-opened"), retrying = key("tok-retrying")
        let failed = key("tok-failed"), none = (0..<20).map { key("tok-none-\($0)") }
        try await ReceiptStore(pool: pool).apply([
            receipt(both, .delivered, after: 2), receipt(both, .opened, after: 5), receipt(openedOnly, .opened, after: 4),
            receipt(retrying, .delivered, after: 6), receipt(failed, .delivered, after: 7),
        ])
        let accepted = [both, openedOnly] + none
        try await outcomes.writer.write(BatchOutcome(deliveries: accepted.map { record($0, .accepted, acceptedAt: created) }
            + [record(retrying, .retrying), record(failed, .invalidToken)]))

        var s = try await state(db, both)
        XCTAssertEqual(s.status, "opened")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(2))
        XCTAssertEqual(s.opened, created.addingTimeInterval(5))
        s = try await state(db, openedOnly)
        XCTAssertEqual(s.status, "opened")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(4), "an open implies a delivery")
        s = try await state(db, retrying)
        XCTAssertEqual(s.status, "delivered")
        s = try await state(db, failed)
        XCTAssertEqual(s.status, "invalid_token", "a failure status keeps only the time")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(7))
        let final = try await db.row(
            "SELECT final_at FROM deliveries WHERE notification_id = '\(retrying.notificationID.uuidString)'::uuid")
        XCTAssertNotNil(final["final_at"], "a delivered row is final (its receipt time when never accepted)")
        let untouched = try await db.row(
            "SELECT count(*) FILTER (WHERE status = 'accepted' AND delivered_at IS NULL AND opened_at IS NULL) AS n "
                + "FROM deliveries WHERE token LIKE 'tok-none-%'")
        XCTAssertEqual(untouched["n"], "20")
        await pool.close()
    }

    /// Migration 0013: the merge looks for a receipt of the inserted rows before it
    /// updates. A receipt of the same notification to another token, or of the same
    /// token for another notification, is not one; a row with its own receipt in the
    /// same statement still gets it, on the plain-insert path new ids take as well.
    func testTheMergeMatchesNotificationAndTokenTogether() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let outcomes = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let shared = UUID()
        let sameNotification = DeliveryKey(notificationID: shared, token: "tok-other", createdAt: created)
        let sameToken = DeliveryKey(notificationID: UUID(), token: "tok-mine", createdAt: created)
        let mine = DeliveryKey(notificationID: shared, token: "tok-mine", createdAt: created)
        let early = DeliveryKey(notificationID: UUID(), token: "tok-early", createdAt: created)
        try await ReceiptStore(pool: pool).apply([
            receipt(sameNotification, .delivered, after: 1), receipt(sameToken, .opened, after: 2),
        ])
        // No inserted row has a receipt: nothing is merged.
        var first = BatchOutcome(deliveries: [record(mine, .accepted, acceptedAt: created)])
        first.idsNewToLedger = [shared]
        try await outcomes.writer.write(first)
        var s = try await state(db, mine)
        XCTAssertEqual(s.status, "accepted")
        XCTAssertNil(s.delivered)
        XCTAssertNil(s.opened)
        // One row of the next statement has its own receipt: that row, and only it, gets it.
        try await ReceiptStore(pool: pool).apply([receipt(early, .delivered, after: 3)])
        let other = DeliveryKey(notificationID: UUID(), token: "tok-plain", createdAt: created)
        var second = BatchOutcome(deliveries: [record(other, .accepted, acceptedAt: created), record(early, .accepted, acceptedAt: created)])
        second.idsNewToLedger = [other.notificationID, early.notificationID]
        try await outcomes.writer.write(second)
        s = try await state(db, early)
        XCTAssertEqual(s.status, "delivered")
        XCTAssertEqual(s.delivered, created.addingTimeInterval(3))
        s = try await state(db, other)
        XCTAssertEqual(s.status, "accepted")
        XCTAssertNil(s.delivered)
        await pool.close()
    }
}
