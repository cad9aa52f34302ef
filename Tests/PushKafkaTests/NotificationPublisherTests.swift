import Foundation
import PushCore
import PushKafka
import PushProducer
import PushTestSupport
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

    /// A producer picks the lane by topic: the Swift library and the Python
    /// example (another language, another Kafka client) publish to the bulk
    /// lane's intake when asked, keyed by recipient, and to the interactive
    /// lane's otherwise.
    func testTheSwiftLibraryAndThePythonExamplePublishToTheLaneAskedFor() async throws {
        let names = TopicNames()
        for lane in Lane.allCases { try cluster.createTopic(names.topics(of: lane).intake, partitions: 1) }
        let publisher = try NotificationPublisher(bootstrapServers: cluster.bootstrapServers, lane: .bulk, logger: logger)
        XCTAssertEqual(publisher.topic, "push.notifications.bulk")
        let token = String(repeating: "cd", count: 32)
        let n = PushNotification(id: UUID(), app: "com.example.shop", createdAt: Date(),
                                 recipients: [Recipient(token: token, platform: .ios)],
                                 alert: PushNotification.Alert(title: "Sale", body: "Today only"))
        _ = try await publisher.publish(n)
        await publisher.close()

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-\(UUID().uuidString).json")
        try Data(n.intakeJSON().encoded()).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = TestEnvironment.schemasDirectory.appendingPathComponent("producers/publish.py").path
        for lane in Lane.allCases {
            let run = try TestEnvironment.runToEnd("/usr/bin/env", [
                "python3", script, "--bootstrap-servers", cluster.bootstrapServers, "--lane", lane.rawValue, file.path,
            ], environment: ProcessInfo.processInfo.environment)
            XCTAssertEqual(run.status, 0, run.output)
        }
        for (lane, expected) in [(Lane.interactive, 1), (.bulk, 2)] {
            let consumer = try makeConsumer(group: "lanes-\(UUID().uuidString)", topics: [names.topics(of: lane).intake])
            let messages = try await collect(consumer, timeout: .seconds(20)) { $0.count >= expected }
            await consumer.close()
            XCTAssertEqual(messages.count, expected, "\(lane)")
            XCTAssertTrue(messages.allSatisfy { $0.key == Array(token.utf8) }, "keyed by the recipient")
            XCTAssertTrue(messages.allSatisfy { (try? PushNotification.decode($0.value).get().id) == n.id })
        }
    }
}
