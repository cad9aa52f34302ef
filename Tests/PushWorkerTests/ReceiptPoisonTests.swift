import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 15: a receipt whose token holds U+0000 made the receipt batch retry
/// every 5 s for ever, and good receipts behind it, on any key, never landed.
/// Now it is rejected (a row in `intake_rejections` and a dead letter) and
/// the rest apply.
final class ReceiptPoisonTests: XCTestCase {
    func testAPoisonReceiptIsRejectedAndTheRestApply() async throws {
        let db = try await MigratedDatabase.make()
        let logger = MigratedDatabase.logger
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        try cluster.createTopic("rp.receipts", partitions: 1)
        try cluster.createTopic("rp.dlq", partitions: 1)
        let pool = db.pool()
        let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let keys = (0..<4).map { DeliveryKey(notificationID: UUID(), token: "tok\($0)", createdAt: created) }
        try await WorkerStores(pool: pool, logger: logger).writer.write(BatchOutcome(deliveries: keys.map {
            DeliveryRecord(key: $0, app: "com.example.shop", platform: .android, status: .accepted, attempts: 1,
                           enqueuedAt: created, acceptedAt: created, finalAt: created)
        }))
        func receipt(_ id: UUID, _ token: String) -> [UInt8] {
            Array("""
                {"schema_version":1,"notification_id":"\(id.uuidString.lowercased())","token":"\(token)",\
                "app":"com.example.shop","platform":"android","kind":"delivered","at":"\(Timestamps.format(created.addingTimeInterval(1)))"}
                """.utf8)
        }
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: logger)
        // Same partition, same batch: two good receipts, the poison one, two more good ones.
        try await producer.send(topic: "rp.receipts", key: nil, value: receipt(keys[0].notificationID, "tok0"))
        try await producer.send(topic: "rp.receipts", key: nil, value: receipt(keys[1].notificationID, "tok1"))
        try await producer.send(topic: "rp.receipts", key: nil, value: receipt(keys[1].notificationID, "tok\\u0000bad"))
        try await producer.send(topic: "rp.receipts", key: nil, value: receipt(keys[2].notificationID, "tok2"))
        try await producer.send(topic: "rp.receipts", key: nil, value: receipt(keys[3].notificationID, "tok3"))

        var configuration = ReceiptConsumerService.Configuration(
            bootstrapServers: cluster.bootstrapServers, groupID: "rp-group.receipts", topicPrefix: "rp",
            kafkaProperties: KafkaTestSettings.fastGroup, databaseURL: db.url)
        configuration.batchSize = 100
        let service = ReceiptConsumerService(configuration: configuration, logger: logger)
        let task = Task { try await service.run() }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, service.counts.applied + service.counts.deadLettered < 5 {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(service.counts.applied, 4)
        XCTAssertEqual(service.counts.deadLettered, 1)
        let delivered = try await db.row("SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'")
        XCTAssertEqual(delivered["n"], "4")
        let rejection = try await db.row("SELECT kind, kafka_topic, kafka_offset, reason FROM intake_rejections")
        XCTAssertEqual(rejection["kafka_topic"], "rp.receipts")
        XCTAssertEqual(rejection["kafka_offset"], "2")
        XCTAssertFalse((rejection["kind"] ?? "").isEmpty)

        let reader = try KafkaConsumer(bootstrapServers: cluster.bootstrapServers, groupID: "rp-dlq-reader", topics: ["rp.dlq"],
                                       properties: KafkaTestSettings.fastGroup, logger: logger)
        var dead: [KafkaMessage] = []
        let readDeadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < readDeadline, dead.isEmpty {
            dead += try await reader.poll(maxMessages: 10, timeout: .milliseconds(200))
        }
        await reader.close(timeout: .seconds(5))
        XCTAssertEqual(dead.count, 1)
        XCTAssertEqual(dead.first.map { RetryHeaders(message: $0).originOffset }, 2)
        XCTAssertTrue(dead.first.flatMap { RetryHeaders(message: $0).reason }?.hasPrefix(rejection["kind"] ?? "?") == true)

        task.cancel()
        try? await task.value
        await producer.close(timeout: .seconds(5))
        await pool.close()
    }
}
