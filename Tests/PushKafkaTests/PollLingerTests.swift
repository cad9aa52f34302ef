import Foundation
import PushKafka
import XCTest

/// `KafkaConsumer.poll(linger:)`: after the first message, the poll waits for
/// more up to the linger, and returns as soon as it has `maxMessages`.
final class PollLingerTests: KafkaClusterTestCase, @unchecked Sendable {
    func testLingerGathersMessagesThatArriveAfterTheFirst() async throws {
        let topic = "linger"
        try cluster.createTopic(topic, partitions: 1)
        let producer = try makeProducer()
        let consumer = try makeConsumer(group: "linger", topics: [topic])
        try await producer.send(topic: topic, key: nil, value: Array("first".utf8))
        // Join the group and take the first message without linger: nothing else is there yet.
        let first = try await collect(consumer, timeout: .seconds(30)) { !$0.isEmpty }
        XCTAssertEqual(first.map { String(decoding: $0.value, as: UTF8.self) }, ["first"])

        // The next poll gets "second" first, then lingers; "third" is produced only once
        // "second" was delivered, so a poll without linger would return before it.
        try await producer.send(topic: topic, key: nil, value: Array("second".utf8))
        let late = Task {
            try await Task.sleep(for: .milliseconds(300))
            try await producer.send(topic: topic, key: nil, value: Array("third".utf8))
        }
        let batch = try await consumer.poll(maxMessages: 2, timeout: .seconds(10), linger: .seconds(20))
        try await late.value
        XCTAssertEqual(batch.map { String(decoding: $0.value, as: UTF8.self) }, ["second", "third"])
        await consumer.close()
        await producer.close()
    }

    func testNoLingerReturnsWhatIsQueued() async throws {
        let topic = "no-linger"
        try cluster.createTopic(topic, partitions: 1)
        let producer = try makeProducer()
        let consumer = try makeConsumer(group: "no-linger", topics: [topic])
        try await producer.send(topic: topic, key: nil, value: Array("only".utf8))
        let got = try await collect(consumer, timeout: .seconds(30)) { !$0.isEmpty }
        XCTAssertEqual(got.count, 1)
        // Nothing more is produced: a zero-linger poll with room for 10 returns empty at its timeout.
        let none = try await consumer.poll(maxMessages: 10, timeout: .milliseconds(300), linger: .zero)
        XCTAssertTrue(none.isEmpty)
        await consumer.close()
        await producer.close()
    }
}
