import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 15: a record PostgreSQL or Kafka refuses for its own sake is
/// isolated from its batch and recorded; everything else still lands.
final class PoisonIsolationTests: XCTestCase {
    private let origin = MessageOrigin(topic: "push.notifications", partition: 3, offset: 1234)

    private func deadLetter(_ size: Int) -> OutgoingMessage {
        var headers = RetryHeaders()
        headers.reason = "too_large: message is \(size) bytes"
        headers.originTopic = origin.topic
        headers.originPartition = origin.partition
        headers.originOffset = origin.offset
        return OutgoingMessage(topic: "push.dlq", key: Array("user-1".utf8), value: [UInt8](repeating: 0x41, count: size),
                               headers: headers.kafkaHeaders, label: "too_large", origin: origin)
    }

    private func header(_ message: OutgoingMessage, _ name: String) -> String? {
        message.headers.first { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    // MARK: dead letters that always fit

    func testTooLargeDeadLetterIsTruncatedThenEmptied() throws {
        let big = deadLetter(1_048_575)
        let truncated = try XCTUnwrap(DeadLetterFit.next(after: big, refusal: "MSG_SIZE_TOO_LARGE", deadLetterTopic: "push.dlq"))
        XCTAssertEqual(truncated.topic, "push.dlq")
        XCTAssertEqual(truncated.value.count, DeadLetterFit.truncatedBodyBytes)
        XCTAssertEqual(truncated.value, Array(big.value.prefix(DeadLetterFit.truncatedBodyBytes)))
        let body = try XCTUnwrap(header(truncated, RetryHeaders.bodyKey))
        XCTAssertTrue(body.hasPrefix("truncated: first 65536 of 1048575 bytes"), body)
        XCTAssertTrue(body.contains("push.notifications/3/1234"), body)
        XCTAssertEqual(header(truncated, RetryHeaders.reasonKey), "too_large: message is 1048575 bytes")

        let emptied = try XCTUnwrap(DeadLetterFit.next(after: truncated, refusal: "MSG_SIZE_TOO_LARGE", deadLetterTopic: "push.dlq"))
        XCTAssertEqual(emptied.value, [])
        XCTAssertNil(emptied.key)
        let omitted = try XCTUnwrap(header(emptied, RetryHeaders.bodyKey))
        XCTAssertTrue(omitted.hasPrefix("omitted: 1048575 bytes"), omitted)
        XCTAssertEqual(emptied.headers.filter { $0.name == RetryHeaders.bodyKey }.count, 1)

        XCTAssertNil(DeadLetterFit.next(after: emptied, refusal: "MSG_SIZE_TOO_LARGE", deadLetterTopic: "push.dlq"))
    }

    func testSmallRefusedDeadLetterLosesItsBodyAtOnce() throws {
        let small = deadLetter(100)
        let next = try XCTUnwrap(DeadLetterFit.next(after: small, refusal: "INVALID_RECORD", deadLetterTopic: "push.dlq"))
        XCTAssertEqual(next.value, [])
        XCTAssertTrue(header(next, RetryHeaders.bodyKey)?.hasPrefix("omitted: 100 bytes (INVALID_RECORD)") == true)
    }

    func testRefusedRetryMessageBecomesADeadLetter() throws {
        var retry = deadLetter(200)
        retry.topic = "push.retry.5s"
        retry.notificationID = UUID()
        let next = try XCTUnwrap(DeadLetterFit.next(after: retry, refusal: "INVALID_RECORD", deadLetterTopic: "push.dlq"))
        XCTAssertEqual(next.topic, "push.dlq")
        XCTAssertEqual(next.value, retry.value)
        XCTAssertEqual(next.label, "produce_failed")
        XCTAssertEqual(header(next, RetryHeaders.reasonKey), "produce_failed: push.retry.5s refused the message: INVALID_RECORD")
    }

    func testReroutedRetryRowsBecomeDeadLettered() {
        let id = UUID(), other = UUID()
        let at = Date()
        func row(_ n: UUID, _ status: DeliveryStatus) -> DeliveryRecord {
            DeliveryRecord(key: DeliveryKey(notificationID: n, token: "t", createdAt: at), app: "a", platform: .ios, status: status, attempts: 1)
        }
        var outcome = BatchOutcome(deliveries: [row(id, .retrying), row(id, .accepted), row(other, .retrying)])
        outcome.deadLetterRerouted([id])
        XCTAssertEqual(outcome.deliveries.map(\.status), [.deadLettered, .accepted, .retrying])
        XCTAssertNotNil(outcome.deliveries[0].finalAt)
    }

    // MARK: bisection

    func testSplitRowsCoversEveryRowAndEnds() {
        let at = Date()
        let keys = (0..<5).map { DeliveryKey(notificationID: UUID(), token: "tok\($0)", createdAt: at) }
        var outcome = BatchOutcome(
            deliveries: keys.map { DeliveryRecord(key: $0, app: "a", platform: .ios, status: .accepted, attempts: 1) },
            attempts: keys.prefix(2).map { AttemptRecord(key: $0, attempt: 1, attemptedAt: at, outcome: "accepted", provider: .apns,
                                                          latencyMilliseconds: 1) })
        outcome.rejections = [IntakeRejection(notificationID: nil, app: nil, kind: "not_json", reason: "x", topic: "t", partition: 0, offset: 9)]
        XCTAssertEqual(outcome.rowCount, 8)
        var pending = [outcome]
        var singles: [BatchOutcome] = []
        var steps = 0
        while let next = pending.popLast() {
            steps += 1
            XCTAssertLessThan(steps, 100, "bisection does not end")
            if let (a, b) = next.splitRows() {
                XCTAssertGreaterThan(a.rowCount, 0)
                XCTAssertGreaterThan(b.rowCount, 0)
                XCTAssertEqual(a.rowCount + b.rowCount, next.rowCount)
                pending += [a, b]
            } else {
                singles.append(next)
            }
        }
        XCTAssertEqual(singles.count, 8)
        XCTAssertEqual(Set(singles.flatMap { $0.deliveries.map(\.key.token) }), Set(keys.map(\.token)))
        XCTAssertEqual(singles.flatMap(\.attempts).count, 2)
        XCTAssertEqual(singles.flatMap(\.rejections).map(\.offset), [9])
    }

    /// Day partitions are named from `created_at`: the name is total for any date.
    func testPartitionDayIsTotal() {
        func dayString(_ date: Date) -> String { String(PartitionDay(containing: date).daysSinceEpoch) }
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: 0)), "0")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: 86_399)), "0")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: 86_400)), "1")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: -1)), "-1")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: -86_400)), "-1")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: 1e300)), "2932896")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: -1e300)), "-719162")
        XCTAssertEqual(dayString(Date(timeIntervalSince1970: .nan)), "0")
    }

    func testStorableTextReplacesNUL() {
        XCTAssertEqual("plain".storableText, "plain")
        XCTAssertEqual("Bad\u{0}Device\u{0}".storableText, "Bad\u{FFFD}Device\u{FFFD}")
    }

    // MARK: against PostgreSQL

    /// Before: one row PostgreSQL cannot take failed the whole write, and the
    /// worker stopped with its offsets unstored (every replica after it too).
    func testWriteIsolatesTheRowPostgresRefuses() async throws {
        let db = try await MigratedDatabase.make()
        let logger = MigratedDatabase.logger
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let store = WorkerStores(pool: pool, logger: logger)
        let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let poisonID = UUID()
        var records = (0..<20).map { i in
            DeliveryRecord(key: DeliveryKey(notificationID: UUID(), token: "good\(i)", createdAt: created), app: "com.example.shop",
                           platform: .android, status: .accepted, attempts: 1, providerReason: "Fine\u{0}Reason",
                           enqueuedAt: created, acceptedAt: created, finalAt: created)
        }
        // A token PostgreSQL text cannot hold (intake rejects it; this stands for whatever else slips through).
        records.insert(DeliveryRecord(key: DeliveryKey(notificationID: poisonID, token: "bad\u{0}token", createdAt: created),
                                      app: "com.example.shop", platform: .android, status: .accepted, attempts: 1), at: 7)
        var outcome = BatchOutcome(deliveries: records)
        outcome.origins[poisonID] = origin

        do {
            try await store.writer.write(outcome)
            XCTFail("the plain write should be refused")
        } catch let error as PostgresError {
            XCTAssertTrue(error.isDataError, "\(error)")
            XCTAssertFalse(error.isRetriable)
        }
        let result = try await store.writer.writeIsolating(outcome)
        XCTAssertEqual(result.refused, 1)
        XCTAssertEqual(result.written.count, 20)
        let count = try await db.row("SELECT count(*) AS n FROM deliveries WHERE token LIKE 'good%'")
        XCTAssertEqual(count["n"], "20")
        let reason = try await db.row("SELECT DISTINCT provider_reason FROM deliveries")
        XCTAssertEqual(reason["provider_reason"], "Fine\u{FFFD}Reason")
        let rejection = try await db.row(
            "SELECT kind, notification_id, kafka_topic, kafka_partition, kafka_offset, reason FROM intake_rejections")
        XCTAssertEqual(rejection["kind"], "write_failed")
        XCTAssertEqual(rejection["notification_id"], poisonID.uuidString.lowercased())
        XCTAssertEqual(rejection["kafka_topic"], "push.notifications")
        XCTAssertEqual(rejection["kafka_partition"], "3")
        XCTAssertEqual(rejection["kafka_offset"], "1234")
        XCTAssertTrue(rejection["reason"]?.contains("NUL") == true, rejection["reason"] ?? "")
    }

    // MARK: against the librdkafka mock cluster

    /// Before: a dead letter over the producer's `message.max.bytes` threw
    /// MSG_SIZE_TOO_LARGE out of the batch and stopped the worker.
    func testOversizeDeadLetterIsProducedTruncated() async throws {
        let logger = MigratedDatabase.logger
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        try cluster.createTopic("pi.dlq", partitions: 1)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: logger)
        var big = deadLetter(1_048_575)
        big.topic = "pi.dlq"
        var small = deadLetter(10)
        small.topic = "pi.dlq"
        let produced = try await OutgoingProducer(producer: producer, deadLetterTopic: "pi.dlq", logger: logger).produce([big, small])
        XCTAssertEqual(produced.failed.count, 0)
        XCTAssertEqual(produced.sent.map(\.value.count).sorted(), [10, DeadLetterFit.truncatedBodyBytes])

        let reader = try KafkaConsumer(bootstrapServers: cluster.bootstrapServers, groupID: "pi-reader", topics: ["pi.dlq"],
                                       properties: KafkaTestSettings.fastGroup, logger: logger)
        var dead: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, dead.count < 2 {
            dead += try await reader.poll(maxMessages: 10, timeout: .milliseconds(200))
        }
        await reader.close(timeout: .seconds(5))
        await producer.close(timeout: .seconds(5))
        XCTAssertEqual(dead.count, 2)
        let cut = try XCTUnwrap(dead.first { $0.value.count == DeadLetterFit.truncatedBodyBytes })
        let body = String(decoding: cut.header(RetryHeaders.bodyKey) ?? [], as: UTF8.self)
        XCTAssertTrue(body.hasPrefix("truncated: first 65536 of 1048575 bytes"), body)
        XCTAssertEqual(RetryHeaders(message: cut).originOffset, 1234)
        XCTAssertEqual(RetryHeaders(message: cut).reason, "too_large: message is 1048575 bytes")
    }
}
