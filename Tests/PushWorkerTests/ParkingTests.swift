import Foundation
import PushCore
import PushKafka
import PushTestSupport
import XCTest
@testable import PushWorker

/// Deliveries a provider cannot take are parked for their app and provider:
/// keyed by the party, on their lane's parked topic, no attempt spent; a
/// hold past its limit is dead-lettered, one past its expiry expires; the
/// poll loop holds a parked message while its provider cannot take it.
final class ParkingTests: XCTestCase {
    let topics = TopicNames()

    func source(_ n: PushNotification, arrival: DecodedMessage.Arrival = .init(), headers: RetryHeaders = .init()) -> WorkItem.Source {
        .init(notification: n, enqueuedAt: nil, headers: headers, sourceKey: Array("k".utf8), arrival: arrival)
    }

    func item(_ n: PushNotification, token: String, arrival: DecodedMessage.Arrival = .init(), headers: RetryHeaders = .init(),
              from shared: WorkItem.Source? = nil) -> WorkItem {
        WorkItem(source: shared ?? source(n, arrival: arrival, headers: headers), recipient: Recipient(token: token, platform: .android),
                 key: DeliveryKey(notificationID: n.id, token: token, createdAt: n.createdAt))
    }

    func notification(expiresIn: TimeInterval? = nil) throws -> PushNotification {
        var n = try PushNotification.decode(Array(RecipientResolutionTests.notification(
            id: UUID(), recipients: #"{"token": "a", "platform": "android"}"#).utf8)).get()
        n.expiresAt = expiresIn.map { Date().addingTimeInterval($0) }
        return n
    }

    func held(_ item: WorkItem, app: String, credential: Bool = false, retryAfter: Duration? = nil) -> HeldDelivery {
        HeldDelivery(item: item, reason: credential ? "CredentialUnavailable(token_endpoint)" : "CircuitOpen",
                     retryAfter: retryAfter, party: HeldParty(provider: .fcm, app: app), credential: credential)
    }

    func testHeldDeliveriesAreParkedPerMessageAndPartyOnTheirLane() throws {
        let n = try notification()
        let scheduler = RetryScheduler(topics: topics, retryPolicy: RetryPolicy())
        var outcome = BatchOutcome()
        let message = source(n, arrival: DecodedMessage.Arrival(lane: .bulk))
        let a = item(n, token: "a", from: message), b = item(n, token: "b", from: message)
        outcome.held = [held(a, app: n.app, retryAfter: .seconds(20)), held(b, app: n.app)]
        scheduler.schedule(&outcome)
        XCTAssertEqual(outcome.outgoing.count, 1, "one parked message for the message's two held recipients")
        let parked = try XCTUnwrap(outcome.outgoing.first)
        XCTAssertEqual(parked.topic, "push.parked.bulk", "a campaign's deliveries park on the bulk lane")
        XCTAssertEqual(parked.key, Array("fcm/\(n.app)".utf8))
        let headers = RetryHeaders(message: KafkaMessage(topic: parked.topic, partition: 0, offset: 0, key: nil, value: [], headers: parked.headers))
        XCTAssertEqual(headers.held, HeldParty(provider: .fcm, app: n.app))
        XCTAssertEqual(headers.attempt, 1, "nothing was sent: no attempt spent")
        XCTAssertEqual(headers.parkCount, 1)
        XCTAssertEqual(headers.dueAt?.timeIntervalSinceNow ?? 0, 20, accuracy: 2, "parked until its Retry-After")
        XCTAssertEqual(try PushNotification.decode(parked.value).get().recipients.map(\.token), ["a", "b"])
        XCTAssertEqual(outcome.deliveries.map(\.status), [.parked, .parked])
        XCTAssertEqual(outcome.deliveries.map(\.attempts), [0, 0])
    }

    func testParkedAgainItKeepsWhenItWasFirstParkedAndCountsTheTimes() throws {
        let n = try notification()
        var headers = RetryHeaders()
        headers.heldSince = Date().addingTimeInterval(-100)
        headers.parkCount = 2
        headers.attempt = 3
        var outcome = BatchOutcome()
        outcome.held = [held(item(n, token: "a", arrival: .init(parked: true), headers: headers), app: n.app)]
        RetryScheduler(topics: topics, retryPolicy: RetryPolicy()).schedule(&outcome)
        let parked = try XCTUnwrap(outcome.outgoing.first)
        let read = RetryHeaders(message: KafkaMessage(topic: parked.topic, partition: 0, offset: 0, key: nil, value: [], headers: parked.headers))
        XCTAssertEqual(parked.topic, "push.parked")
        XCTAssertEqual(read.parkCount, 3)
        XCTAssertEqual(read.attempt, 3)
        XCTAssertEqual(read.heldSince?.timeIntervalSince1970 ?? 0, headers.heldSince?.timeIntervalSince1970 ?? 1, accuracy: 0.001)
    }

    func testAHoldPastItsLimitIsDeadLetteredAndOnePastExpiryExpires() throws {
        var policy = RetryPolicy()
        policy.maxCredentialHold = .seconds(60)
        let scheduler = RetryScheduler(topics: topics, retryPolicy: policy)
        var headers = RetryHeaders()
        headers.heldSince = Date().addingTimeInterval(-61)
        let n = try notification()
        var outcome = BatchOutcome()
        outcome.held = [held(item(n, token: "a", headers: headers), app: n.app, credential: true)]
        scheduler.schedule(&outcome)
        XCTAssertEqual(outcome.outgoing.map(\.topic), ["push.dlq"])
        XCTAssertEqual(outcome.outgoing.first?.label, "held_too_long")
        XCTAssertEqual(outcome.deliveries.map(\.status), [.deadLettered])
        XCTAssertTrue(outcome.deliveries.first?.detail?.contains("held longer than 60 s") == true, outcome.deliveries.first?.detail ?? "-")

        var expiring = BatchOutcome()
        expiring.held = [held(item(try notification(expiresIn: 5), token: "b"), app: n.app, retryAfter: .seconds(30))]
        scheduler.schedule(&expiring)
        XCTAssertTrue(expiring.outgoing.isEmpty, "nothing to carry: it expires")
        XCTAssertEqual(expiring.deliveries.map(\.status), [.expired])
    }

    /// The poll loop holds a parked message until it is due and, once due, for
    /// as long as its party's client says; a retry by its due time only.
    func testAHeldMessageIsLookedAtAgainWhenDueAndKeptWhileItsProviderCannotTakeIt() {
        var delayed = DelayedPartitions()
        let now = Date()
        let tp = KafkaTopicPartition(topic: "push.parked", partition: 0)
        func message(_ offset: Int64) -> KafkaMessage {
            KafkaMessage(topic: tp.topic, partition: tp.partition, offset: offset, key: nil, value: [1])
        }
        XCTAssertTrue(delayed.hold(message(0), now: now, due: { now.addingTimeInterval(1) }))
        XCTAssertTrue(delayed.hold(message(1), now: now, due: { nil }), "behind a held message: held too")
        var released: [Int64] = []
        // Due, but its provider is still down for 30 s: kept, and the one behind it too.
        var emptied = delayed.due(at: now.addingTimeInterval(2), recheck: { _ in now.addingTimeInterval(30) }) { released += $0.map(\.offset) }
        XCTAssertEqual(released, [])
        XCTAssertEqual(emptied, [])
        emptied = delayed.due(at: now.addingTimeInterval(10), recheck: { _ in nil }) { released += $0.map(\.offset) }
        XCTAssertEqual(released, [], "its new due time has not come")
        emptied = delayed.due(at: now.addingTimeInterval(31), recheck: { _ in nil }) { released += $0.map(\.offset) }
        XCTAssertEqual(released, [0, 1])
        XCTAssertEqual(emptied, [tp])
        XCTAssertEqual(delayed.heldBytes, 0)
    }

    func testDueTimesTrustAParkedHeaderOnlyUpToTheLongestPark() throws {
        let router = try ProviderRouter(configuration: WorkerConfiguration(), logger: MigratedDatabase.logger)
        defer { router.shutdown() }
        let dues = DueTimes(topics: topics, router: router)
        let now = Date()
        var headers = RetryHeaders()
        headers.dueAt = now.addingTimeInterval(86_400 * 365)
        headers.held = HeldParty(provider: .fcm, app: "no.such.app")
        let parked = KafkaMessage(topic: "push.parked", partition: 0, offset: 0, key: nil, value: [], headers: headers.kafkaHeaders)
        XCTAssertEqual(dues.due(of: parked, now: now)?.timeIntervalSince(now) ?? 0, 600, accuracy: 0.01)
        headers.dueAt = now.addingTimeInterval(-5)
        let due = KafkaMessage(topic: "push.parked.bulk", partition: 0, offset: 0, key: nil, value: [], headers: headers.kafkaHeaders)
        XCTAssertNil(dues.due(of: due, now: now), "due, and no client holds it: now")
        let intake = KafkaMessage(topic: "push.notifications", partition: 0, offset: 0, key: nil, value: [], headers: headers.kafkaHeaders)
        XCTAssertNil(dues.due(of: intake, now: now), "headers on a producer's topic steer nothing")
    }

    /// Parked messages held for a provider that is down take no room under the
    /// message bound: the other partitions keep being polled.
    func testHeldMessagesTakeNoRoomUnderTheMessageBound() {
        var delayed = DelayedPartitions()
        let now = Date()
        let parked = KafkaTopicPartition(topic: "push.parked", partition: 0)
        let intake = KafkaTopicPartition(topic: "push.notifications", partition: 0)
        for offset in 0..<Int64(600) {
            XCTAssertTrue(delayed.hold(KafkaMessage(topic: parked.topic, partition: 0, offset: offset, key: nil, value: [1]),
                                       now: now, due: { now.addingTimeInterval(30) }))
        }
        XCTAssertEqual(delayed.heldCount, 600)
        let working = delayed.working([parked: 600, intake: 10])
        XCTAssertEqual(working, [parked: 0, intake: 10])
        var pauses = PartitionPauses()
        let change = pauses.backpressure(inFlight: working, total: 512, perPartition: 512)
        XCTAssertEqual(change.pause, [], "600 held parked messages do not stop intake at a bound of 512")
    }
}
