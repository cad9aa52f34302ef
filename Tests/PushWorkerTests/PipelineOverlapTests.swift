import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Batches overlap (one batch per poll spans partitions; later batches may
/// finish first): offsets are stored only up to the lowest unfinished one,
/// an abandoned batch holds back everything after it, the worker-wide
/// in-flight count includes held messages, and the poll loop's wake-up works.
/// The one-statement outcome write keeps the ledger rules.
final class PipelineOverlapTests: XCTestCase {
    let p0 = KafkaTopicPartition(topic: "push.notifications", partition: 0)
    let p1 = KafkaTopicPartition(topic: "push.notifications", partition: 1)

    func messages(_ tp: KafkaTopicPartition, _ offsets: Range<Int64>) -> [KafkaMessage] {
        offsets.map { KafkaMessage(topic: tp.topic, partition: tp.partition, offset: $0, key: nil, value: []) }
    }

    func testALaterCrossPartitionBatchFinishingFirstStoresNothingPastTheEarlierOne() {
        let book = OffsetBook()
        book.assign([p0, p1])
        let first = messages(p0, 0..<3) + messages(p1, 0..<2)
        let second = messages(p0, 3..<5) + messages(p1, 2..<4)
        XCTAssertEqual(book.begin(first + second).count, 9)
        let a = book.dispatch(first)
        let b = book.dispatch(second)
        XCTAssertEqual(book.inFlightTotal(), 9)
        XCTAssertEqual(book.complete(b), [:], "the earlier batch is unfinished on both partitions")
        XCTAssertEqual(book.inFlightTotal(), 5)
        XCTAssertEqual(book.complete(a), [p0: 5, p1: 4], "both batches done: up to the end of each partition")
        XCTAssertEqual(book.inFlightTotal(), 0)
        XCTAssertEqual(book.dispatchedTotal(), 0)
    }

    func testAnAbandonedBatchHoldsBackEveryLaterOffsetOfItsPartitions() {
        let book = OffsetBook()
        book.assign([p0, p1])
        let first = messages(p0, 0..<2) + messages(p1, 0..<1)
        let second = messages(p0, 2..<4)
        let third = messages(p1, 1..<3)
        _ = book.begin(first + second + third)
        let a = book.dispatch(first), b = book.dispatch(second), c = book.dispatch(third)
        book.abandon(a)
        XCTAssertEqual(book.complete(b), [:])
        XCTAssertEqual(book.complete(c), [:])
        XCTAssertEqual(book.dispatchedTotal(), 0, "nothing is running any more")
        XCTAssertEqual(book.inFlightTotal(), 3, "the abandoned offsets still count against the bound")
    }

    func testOnlyTheRevokedPartitionOfABatchIsIgnoredOnCompletion() {
        let book = OffsetBook()
        book.assign([p0, p1])
        let batch = messages(p0, 0..<2) + messages(p1, 0..<2)
        _ = book.begin(batch)
        let ticket = book.dispatch(batch)
        book.revoke([p1])
        XCTAssertEqual(book.complete(ticket), [p0: 2], "p1 is no longer ours: nothing stored for it")
    }

    /// A partition revoked and assigned again starts a new generation: a
    /// ticket of the old one neither stores offsets nor changes the new
    /// counts, and a re-delivered offset is begun once.
    func testACompletionFromBeforeAReassignmentChangesNothingOfTheNewGeneration() {
        let book = OffsetBook()
        book.assign([p0, p1])
        let old = messages(p0, 0..<4) + messages(p1, 0..<1)
        _ = book.begin(old)
        let oldTicket = book.dispatch(old)
        book.revoke([p0])
        book.assign([p0])
        let again = messages(p0, 2..<6)
        XCTAssertEqual(book.begin(again + messages(p0, 5..<6)).count, 4, "offset 5 twice in one poll is begun once")
        let newTicket = book.dispatch(again)
        XCTAssertEqual(book.dispatchedInFlight([p0]), 4)
        XCTAssertEqual(book.complete(oldTicket), [p1: 1], "p0's old generation stores nothing")
        XCTAssertEqual(book.dispatchedInFlight([p0]), 4, "nor changes the new generation's count")
        XCTAssertEqual(book.inFlightByPartition(), [p0: 4, p1: 0])
        XCTAssertEqual(book.complete(newTicket), [p0: 6])
        XCTAssertEqual(book.begin(messages(p0, 3..<4)).count, 0, "an offset below the stored one is a re-delivery")
        XCTAssertEqual(book.dispatchedTotal(), 0)
    }

    func testAFireBeforeTheWaitIsNotLost() async {
        let signal = BatchCompletionSignal()
        signal.fire()
        // Returns at once; were the fire lost, this would sit out the hour and the test would time out.
        await signal.wait(timeout: .seconds(3600))
        let waiter = Task { await signal.wait(timeout: .seconds(3600)) }
        try? await Task.sleep(for: .milliseconds(20))
        signal.fire()
        await waiter.value
    }

    func testTheOneStatementWriteStoresDeliveriesAndAttemptsAndKeepsAFinalStatus() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let now = Date()
        let key = DeliveryKey(notificationID: UUID(), token: "tok-overlap", createdAt: now)
        func outcome(_ status: DeliveryStatus, reason: String?) -> BatchOutcome {
            BatchOutcome(
                deliveries: [DeliveryRecord(key: key, app: "app.overlap", platform: .ios, status: status, attempts: 1,
                                            providerStatus: status == .accepted ? 200 : 503, providerReason: reason,
                                            providerMessageID: nil, detail: nil, enqueuedAt: now, firstAttemptAt: now,
                                            lastAttemptAt: now, acceptedAt: status == .accepted ? now : nil,
                                            finalAt: status.isFinal ? now : nil)],
                attempts: [AttemptRecord(key: key, attempt: 1, attemptedAt: now, outcome: status.rawValue, provider: .apns,
                                         providerStatus: status == .accepted ? 200 : 503, providerReason: reason,
                                         latencyMilliseconds: 1.5)])
        }
        try await store.writer.write(outcome(.accepted, reason: nil))
        try await store.writer.write(outcome(.retrying, reason: "ServiceUnavailable"))
        let row = try await db.row("SELECT status, attempts, provider_status FROM deliveries WHERE token = 'tok-overlap'")
        XCTAssertEqual(row["status"], "accepted", "a final status is never overwritten")
        XCTAssertEqual(row["attempts"], "2")
        XCTAssertEqual(row["provider_status"], "200")
        let attempts = try await db.row("SELECT count(*) AS n FROM delivery_attempts WHERE token = 'tok-overlap'")
        XCTAssertEqual(attempts["n"], "2", "both writes appended their attempt")
        let states = try await store.ledger.ledgerStates([key, DeliveryKey(notificationID: UUID(), token: "other", createdAt: now)])
        XCTAssertEqual(states, LedgerStore.LedgerStates(final: [key], retrying: [:]), "the ledger check sees the written final row")
        // A row that only ever waited on a retry tier is reported as such, not as final.
        let waiting = DeliveryKey(notificationID: UUID(), token: "tok-waiting", createdAt: now)
        try await store.writer.write(BatchOutcome(deliveries: [
            DeliveryRecord(key: waiting, app: "app.overlap", platform: .ios, status: .retrying, attempts: 1,
                           providerStatus: 429, providerReason: "TooManyRequests", providerMessageID: nil, detail: nil,
                           enqueuedAt: now, firstAttemptAt: now, lastAttemptAt: now, finalAt: nil),
        ]))
        let both = try await store.ledger.ledgerStates([key, waiting])
        XCTAssertEqual(both.final, [key])
        XCTAssertEqual(Array(both.retrying.keys), [waiting])
        XCTAssertEqual(try XCTUnwrap(both.retrying[waiting]).timeIntervalSince1970, now.timeIntervalSince1970, accuracy: 0.001,
                       "with the time of its last attempt")
        await pool.close()
    }

    /// Issue 18: the ledger's deliveries are probed only for ids `notification_ids`
    /// has seen; the ids lookup must therefore know every id a written batch
    /// carried, under the created_at it is filed under, and no other.
    func testTheIDsLookupKnowsEveryWrittenIDAndNoOther() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded())
        let written = UUID(), fresh = UUID()
        let key = DeliveryKey(notificationID: written, token: "tok-ids", createdAt: now)
        try await store.writer.write(BatchOutcome(deliveries: [
            DeliveryRecord(key: key, app: "app.ids", platform: .ios, status: .accepted, attempts: 1,
                           providerStatus: 200, providerReason: nil, providerMessageID: nil, detail: nil,
                           enqueuedAt: now, firstAttemptAt: now, lastAttemptAt: now, acceptedAt: now, finalAt: now),
        ]))
        let same = try await store.ledger.ledgerIDs([written: now, fresh: now])
        XCTAssertEqual(same.known, [written], "only the written id is known")
        XCTAssertEqual(same.createdAt, [:], "the same created_at is not reported as different")
        let later = now.addingTimeInterval(120)
        let moved = try await store.ledger.ledgerIDs([written: later])
        XCTAssertEqual(moved.known, [written])
        XCTAssertEqual(moved.createdAt, [written: now], "a later message with the id is filed under the first created_at")
        let states = try await store.ledger.ledgerStates([key])
        XCTAssertEqual(states.final, [key], "a known id's final row is found by the probe the lookup gates")
        await pool.close()
    }
}
