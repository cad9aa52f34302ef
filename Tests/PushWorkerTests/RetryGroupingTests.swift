import Foundation
import PushCore
import PushKafka
import PushTestSupport
import XCTest
@testable import PushWorker

/// A batch can hold two messages of one notification at different attempts:
/// a retry-tier message whose recipients were sent and failed (attempt 3,
/// say) and one whose recipients the client held back (still attempt 1).
/// Each failed recipient's next retry message carries the attempt of the
/// message it came from, so no recipient is tried more than
/// `retry.max_attempts` times and none is dead-lettered early.
final class RetryGroupingTests: XCTestCase {
    static func item(_ n: PushNotification, token: String, attempt: Int, tier: String?, originOffset: Int64) -> WorkItem {
        var headers = RetryHeaders()
        headers.attempt = attempt
        headers.firstFailureAt = Date(timeIntervalSince1970: 1_800_000_000 + Double(attempt))
        headers.originTopic = "push.notifications"
        headers.originPartition = 0
        headers.originOffset = originOffset
        return WorkItem(
            source: .init(notification: n, enqueuedAt: nil, headers: headers, sourceKey: nil, arrival: .init(tier: tier)),
            recipient: Recipient(token: token, platform: .android),
            key: DeliveryKey(notificationID: n.id, token: token, createdAt: n.createdAt))
    }

    static func need(_ item: WorkItem) -> RetryNeed {
        RetryNeed(item: item, reason: "UNAVAILABLE", providerStatus: 503,
                  retryAfter: nil, attempts: 1, firstAttemptAt: Date(), lastAttemptAt: Date())
    }

    func testEachFailedRecipientKeepsTheAttemptOfTheMessageItCameFrom() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let processor = try RecipientResolutionTests.processor(pool)  // retry.max_attempts 5
        let n = try PushNotification.decode(Array(RecipientResolutionTests.notification(
            id: UUID(), recipients: #"{"token": "fcm-a", "platform": "android"}, {"token": "fcm-b", "platform": "android"}"#).utf8)).get()
        // fcm-a came from the 10m tier at attempt 4, fcm-b from a message held back at attempt 1,
        // fcm-c from that same held-back message and held back again.
        let late = Self.item(n, token: "fcm-a", attempt: 4, tier: "10m", originOffset: 7)
        let early = Self.item(n, token: "fcm-b", attempt: 1, tier: "5s", originOffset: 9)
        var held = early
        held.recipient = Recipient(token: "fcm-c", platform: .android)
        held.key.token = "fcm-c"
        var outcome = BatchOutcome()
        outcome.retryNeeds = [Self.need(early), Self.need(late)]
        outcome.held = [HeldDelivery(item: held, reason: "CircuitOpen", retryAfter: nil,
                                     party: HeldParty(provider: .fcm, app: n.app), credential: false)]
        processor.retries.schedule(&outcome)

        func messages(with token: String) throws -> [(attempt: Int?, recipients: [String], topic: String, origin: Int64?)] {
            try outcome.outgoing.compactMap { m in
                let decoded = try PushNotification.decode(m.value).get()
                guard decoded.recipients.contains(where: { $0.token == token }) else { return nil }
                let headers = RetryHeaders(message: KafkaMessage(topic: m.topic, partition: 0, offset: 0, key: nil, value: m.value,
                                                                 headers: m.headers))
                return (m.topic == "push.dlq" ? nil : headers.attempt, decoded.recipients.map(\.token), m.topic, headers.originOffset)
            }
        }
        let a = try messages(with: "fcm-a"), b = try messages(with: "fcm-b"), c = try messages(with: "fcm-c")
        XCTAssertEqual(a.count, 1)
        XCTAssertEqual(b.count, 1)
        XCTAssertEqual(c.count, 1)
        XCTAssertEqual(a.first?.attempt, 5, "attempt 4 failed: attempt 5 next, not 2")
        XCTAssertEqual(a.first?.recipients, ["fcm-a"])
        XCTAssertEqual(a.first?.origin, 7, "the origin of the message fcm-a came from")
        XCTAssertEqual(b.first?.attempt, 2, "attempt 1 failed: attempt 2 next, not 5")
        XCTAssertEqual(b.first?.recipients, ["fcm-b"])
        XCTAssertEqual(b.first?.origin, 9)
        XCTAssertEqual(c.first?.attempt, 1, "held back again: still attempt 1")
        XCTAssertEqual(c.first?.topic, "push.parked", "held back: parked for its provider, not cycled through the tiers")
        XCTAssertEqual(c.first?.recipients, ["fcm-c"])
        // The ledger rows say the same.
        let details = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, $0.detail ?? "") })
        XCTAssertTrue(details["fcm-a"]?.hasPrefix("retry 5 ") == true, details["fcm-a"] ?? "-")
        XCTAssertTrue(details["fcm-b"]?.hasPrefix("retry 2 ") == true, details["fcm-b"] ?? "-")

        // At the last attempt only the recipient that used it up is dead-lettered.
        var last = BatchOutcome()
        last.retryNeeds = [Self.need(early), Self.need(Self.item(n, token: "fcm-a", attempt: 5, tier: "10m", originOffset: 7))]
        processor.retries.schedule(&last)
        let statuses = Dictionary(uniqueKeysWithValues: last.deliveries.map { ($0.key.token, $0.status) })
        XCTAssertEqual(statuses["fcm-a"], .deadLettered)
        XCTAssertEqual(statuses["fcm-b"], .retrying, "attempt 1 of 5 is not exhausted by another message's attempt 5")
        XCTAssertEqual(last.outgoing.map(\.topic).sorted(), ["push.dlq", "push.retry.5s"])
    }

    /// Retry headers are bytes anyone with produce rights on a retry topic can
    /// write. A message with a hostile attempt header is clamped on its own
    /// (above 1,000: 1,000, so exhausted; past Int, negative, NUL, not a
    /// number: attempt 1) and cannot
    /// move the attempt of another message of the same notification.
    func testAHostileAttemptHeaderStaysWithItsOwnMessage() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let processor = try RecipientResolutionTests.processor(pool)  // retry.max_attempts 5
        let n = try PushNotification.decode(Array(RecipientResolutionTests.notification(
            id: UUID(), recipients: #"{"token": "fcm-a", "platform": "android"}"#).utf8)).get()
        func item(_ token: String, attemptHeader: [UInt8]) -> WorkItem {
            let message = KafkaMessage(topic: "push.retry.5s", partition: 0, offset: 1, key: nil, value: [],
                                       headers: [(RetryHeaders.attemptKey, attemptHeader)])
            return WorkItem(
                source: .init(notification: n, enqueuedAt: nil, headers: RetryHeaders(message: message), sourceKey: nil, arrival: .init(tier: "5s")),
                recipient: Recipient(token: token, platform: .android),
                key: DeliveryKey(notificationID: n.id, token: token, createdAt: n.createdAt))
        }
        let huge = item("fcm-huge", attemptHeader: Array("999999".utf8))
        let overflow = item("fcm-overflow", attemptHeader: Array("99999999999999999999999".utf8))
        let negative = item("fcm-negative", attemptHeader: Array("-7".utf8))
        let nul = item("fcm-nul", attemptHeader: [0x33, 0x00, 0xFF])
        let honest = item("fcm-honest", attemptHeader: Array("3".utf8))
        var outcome = BatchOutcome()
        outcome.retryNeeds = [huge, overflow, negative, nul, honest].map { Self.need($0) }
        processor.retries.schedule(&outcome)
        let statuses = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, $0.status) })
        XCTAssertEqual(statuses["fcm-huge"], .deadLettered, "a huge attempt is clamped and exhausted, without a trap")
        XCTAssertEqual(statuses["fcm-overflow"], .retrying, "a number past Int reads as no attempt header: 1")
        XCTAssertEqual(statuses["fcm-negative"], .retrying)
        XCTAssertEqual(statuses["fcm-nul"], .retrying)
        XCTAssertEqual(statuses["fcm-honest"], .retrying)
        var attempts: [String: Int] = [:]
        for m in outcome.outgoing where m.topic != "push.dlq" {
            let headers = RetryHeaders(message: KafkaMessage(topic: m.topic, partition: 0, offset: 0, key: nil, value: m.value, headers: m.headers))
            for r in try PushNotification.decode(m.value).get().recipients { attempts[r.token] = headers.attempt }
        }
        XCTAssertEqual(attempts, ["fcm-overflow": 2, "fcm-negative": 2, "fcm-nul": 2, "fcm-honest": 4], "each from its own message's attempt")
    }
}
