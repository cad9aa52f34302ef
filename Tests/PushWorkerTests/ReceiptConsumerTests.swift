import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// The receipt consumer against a real librdkafka mock cluster and PostgreSQL:
/// valid receipts land in the ledger, malformed ones go to the DLQ with a reason.
final class ReceiptConsumerTests: XCTestCase {
    func testConsumesAppliesAndDeadLetters() async throws {
        let db = try await MigratedDatabase.make()
        let logger = MigratedDatabase.logger
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        try cluster.createTopic("rt.receipts", partitions: 2)
        try cluster.createTopic("rt.dlq", partitions: 1)

        let pool = db.pool()
        let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let keys = (0..<3).map { DeliveryKey(notificationID: UUID(), token: "tok\($0)", createdAt: created) }
        try await WorkerStores(pool: pool, logger: logger).writer.write(BatchOutcome(deliveries: keys.map {
            DeliveryRecord(key: $0, app: "com.example.shop", platform: .android, status: .accepted, attempts: 1,
                           enqueuedAt: created, acceptedAt: created, finalAt: created)
        }))

        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: logger)
        let receipts = keys.map { Receipt(notificationID: $0.notificationID, token: $0.token, app: "com.example.shop",
                                          platform: .android, kind: .delivered, at: created.addingTimeInterval(1)) }
            + [Receipt(notificationID: keys[0].notificationID, token: keys[0].token, app: "com.example.shop",
                       platform: .android, kind: .opened, at: created.addingTimeInterval(5))]
        for r in receipts {
            try await producer.send(topic: "rt.receipts", key: Array(r.notificationID.uuidString.utf8), value: r.json().encoded())
        }
        try await producer.send(topic: "rt.receipts", key: nil, value: Array("{not json".utf8))
        try await producer.send(topic: "rt.receipts", key: nil, value: Array(#"{"schema_version":1,"kind":"clicked"}"#.utf8))

        var configuration = ReceiptConsumerService.Configuration(
            bootstrapServers: cluster.bootstrapServers, groupID: "rt-group.receipts", topicPrefix: "rt",
            kafkaProperties: KafkaTestSettings.fastGroup, databaseURL: db.url)
        configuration.batchSize = 100
        let service = ReceiptConsumerService(configuration: configuration, logger: logger)
        let task = Task { try await service.run() }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, service.counts.applied + service.counts.deadLettered < 6 {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(service.counts.applied, 4)
        XCTAssertEqual(service.counts.deadLettered, 2)

        let states = try await db.connection.query("SELECT token, status, delivered_at, opened_at FROM deliveries ORDER BY token")
        XCTAssertEqual(states.rows.map { "\($0["token"] ?? "∅")|\($0["status"] ?? "∅")" }, ["tok0|opened", "tok1|delivered", "tok2|delivered"])
        XCTAssertEqual(try states.rows[1].date("delivered_at"), created.addingTimeInterval(1))

        // The DLQ holds both malformed messages, each with its reason and origin.
        let reader = try KafkaConsumer(bootstrapServers: cluster.bootstrapServers, groupID: "rt-dlq-reader", topics: ["rt.dlq"],
                                       properties: KafkaTestSettings.fastGroup, logger: logger)
        var dead: [KafkaMessage] = []
        let readDeadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < readDeadline, dead.count < 2 {
            dead += try await reader.poll(maxMessages: 10, timeout: .milliseconds(200))
        }
        await reader.close(timeout: .seconds(5))
        XCTAssertEqual(dead.count, 2)
        let reasons = dead.map { RetryHeaders(message: $0).reason ?? "" }.sorted()
        // `<kind>: <reason>`, the kind being the intake reason code also in `intake_rejections.kind`.
        XCTAssertTrue(reasons.contains { $0.hasPrefix("not_json: ") }, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.hasPrefix("missing_field: ") || $0.hasPrefix("invalid_value: ") }, "\(reasons)")
        let kinds = try await db.connection.query("SELECT kind FROM intake_rejections WHERE kafka_topic = 'rt.receipts' ORDER BY kind")
        XCTAssertEqual(kinds.rows.count, 2)
        XCTAssertTrue(dead.allSatisfy { RetryHeaders(message: $0).originTopic == "rt.receipts" })

        task.cancel()
        try? await task.value
        await producer.close(timeout: .seconds(5))
        await pool.close()
    }
}
