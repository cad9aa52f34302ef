import Foundation
import PushCore
import PushKafka
import PushProducer
import XCTest

/// `NotificationPublisher.connect` against the mock cluster: it reads the
/// intake topic's metadata before the first publish, and fails fast, with a
/// Kafka error, when no broker answers.
final class NotificationPublisherTests: KafkaClusterTestCase, @unchecked Sendable {
    func testConnectReportsTheIntakeTopicsPartitionsAndPublishingFollows() async throws {
        try cluster.createTopic("push.notifications", partitions: 5)
        let publisher = try NotificationPublisher(bootstrapServers: cluster.bootstrapServers, logger: logger)
        let partitions = try await publisher.connect()
        XCTAssertEqual(partitions, 5)

        let n = PushNotification(
            id: UUID(), app: "com.example.shop", createdAt: Date(),
            recipients: [Recipient(token: String(repeating: "ab", count: 32), platform: .ios)],
            alert: PushNotification.Alert(title: "Hi", body: "There"))
        let (partition, offset) = try await publisher.publish(n)
        XCTAssertTrue((0..<5).contains(partition))
        XCTAssertEqual(offset, 0)
        await publisher.close()
    }

    func testConnectThrowsWhenNoBrokerAnswers() async throws {
        // Nothing listens on port 1; librdkafka keeps retrying, so connect must give up at its timeout.
        let publisher = try NotificationPublisher(bootstrapServers: "127.0.0.1:1", logger: logger)
        do {
            _ = try await publisher.connect(timeout: .seconds(1))
            XCTFail("connect succeeded with no broker")
        } catch let error as KafkaError {
            XCTAssertTrue("\(error)".contains("metadata for push.notifications"), "\(error)")
        }
        await publisher.close()
    }
}
