import Foundation
import Logging
import PushKafka
import PushTestSupport
import XCTest

/// Shared set-up for tests that run against a real 3-broker librdkafka mock cluster.
class KafkaClusterTestCase: XCTestCase, @unchecked Sendable {
    var cluster: KafkaMockCluster!
    var logger = TestEnvironment.logger("pushkafka.tests")

    override func setUp() async throws {
        cluster = try KafkaMockCluster(brokers: 3, logger: logger)
    }

    override func tearDown() async throws {
        cluster = nil
    }

    func makeProducer() throws -> KafkaProducer {
        try KafkaProducer(bootstrapServers: cluster.bootstrapServers, properties: ["linger.ms": "2"], logger: logger)
    }

    func makeConsumer(group: String, topics: [String], extra: [String: String] = [:]) throws -> KafkaConsumer {
        try KafkaConsumer(
            bootstrapServers: cluster.bootstrapServers, groupID: group, topics: topics,
            properties: KafkaTestSettings.fastGroup.merging(extra) { $1 }, logger: logger)
    }

    /// Polls until `done(collected)` or `timeout`; returns everything received.
    func collect(
        _ consumer: KafkaConsumer, timeout: Duration, until done: ([KafkaMessage]) -> Bool
    ) async throws -> [KafkaMessage] {
        var all: [KafkaMessage] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !done(all) {
            all += try await consumer.poll(maxMessages: 500, timeout: .milliseconds(200))
        }
        return all
    }

    /// Polls (and keeps the group alive) until `condition()` holds or `timeout`.
    func pollUntil(
        _ consumers: [KafkaConsumer], timeout: Duration, into sinks: [MessageSink] = [],
        _ condition: () throws -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            for (index, consumer) in consumers.enumerated() {
                let batch = try await consumer.poll(maxMessages: 500, timeout: .milliseconds(100))
                if index < sinks.count { sinks[index].append(batch) }
            }
        }
        return try condition()
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Thread-safe collector for messages and rebalance events seen in tests.
final class MessageSink: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var _messages: [KafkaMessage] = []
    private var _events: [KafkaRebalanceEvent] = []

    func append(_ batch: [KafkaMessage]) { lock.withLock { _messages += batch } }
    func record(_ event: KafkaRebalanceEvent) { lock.withLock { _events.append(event) } }
    var messages: [KafkaMessage] { lock.withLock { _messages } }
    var events: [KafkaRebalanceEvent] { lock.withLock { _events } }
}
