import Foundation
import Logging
import PushCore
import PushKafka

/// Publishes notifications to PushFleet's intake topic from a Swift product
/// service: validates first (so a bad notification fails at the producer,
/// with the same field-level errors a worker would record), encodes the
/// intake JSON, keys it by recipient so one recipient's notifications stay
/// ordered, and returns once the brokers have acknowledged it.
public final class NotificationPublisher: Sendable {
    private let producer: KafkaProducer
    /// The intake topic, e.g. `push.notifications`.
    public let topic: String

    /// - Parameters:
    ///   - bootstrapServers: Kafka brokers.
    ///   - topicPrefix: PushFleet's topic prefix (default `push`).
    ///   - properties: extra librdkafka properties (security, timeouts).
    ///   - lane: `.interactive` (transactional, one-time codes, chat) or `.bulk`
    ///     (campaigns): the lane's intake topic is where it publishes.
    ///   - topic: publish here instead of the lane's intake (tools and tests).
    public init(bootstrapServers: String, topicPrefix: String = TopicNames.defaultPrefix, properties: [String: String] = [:],
                lane: Lane = .interactive, topic: String? = nil, logger: Logger) throws {
        self.producer = try KafkaProducer(bootstrapServers: bootstrapServers, properties: properties, logger: logger)
        self.topic = topic ?? TopicNames(prefix: topicPrefix).topics(of: lane).intake
    }

    /// Connects to the brokers and reads the intake topic's metadata, so the
    /// first `publish` does not wait for either; a service can call it at start
    /// to fail fast when Kafka is unreachable or the topic is missing.
    /// - Returns: the intake topic's partition count.
    /// - Throws: `KafkaError` if no broker answered within `timeout` or the topic does not exist.
    @discardableResult
    public func connect(timeout: Duration = .seconds(10)) async throws -> Int {
        try await producer.partitionCount(topic: topic, timeout: timeout)
    }

    /// Validates and publishes one notification.
    /// - Throws: `IntakeError` if it would be rejected; `KafkaError` if the brokers refuse it.
    @discardableResult
    public func publish(_ notification: PushNotification) async throws -> (partition: Int32, offset: Int64) {
        let bytes = notification.intakeJSON().encoded()
        if case .failure(let error) = PushNotification.decode(bytes) { throw error }
        return try await producer.send(topic: topic, key: Array(notification.partitionKey.utf8), value: bytes)
    }

    /// Publishes bytes as they are, without validation (tools and tests that
    /// need to exercise the workers' rejection paths).
    @discardableResult
    public func publishRaw(_ bytes: [UInt8], key: [UInt8]?) async throws -> (partition: Int32, offset: Int64) {
        try await producer.send(topic: topic, key: key, value: bytes)
    }

    /// Waits for queued messages, then releases the producer.
    public func close() async {
        await producer.close()
    }
}
