import Foundation
@testable import PushKafka
import XCTest

final class FaultTests: KafkaClusterTestCase, @unchecked Sendable {
    /// Sends to a partition whose leader is down wait for it (instead of failing), and the
    /// idempotent producer writes every message exactly once after the broker returns.
    func testProducerRidesOutBrokerOutage() async throws {
        let topic = "outage"
        try cluster.createTopic(topic, partitions: 3)
        // Make sure broker 2 leads a partition: the mock's own leader choice varies.
        try cluster.setPartitionLeader(KafkaTopicPartition(topic: topic, partition: 1), brokerID: 2)
        let producer = try KafkaProducer(
            bootstrapServers: cluster.bootstrapServers,
            properties: ["linger.ms": "2", "reconnect.backoff.max.ms": "300"], logger: logger)
        try await producer.send(topic: topic, key: nil, value: bytes("warm-up"), partition: 0)
        try cluster.setBrokerDown(2)
        let done = MessageSink()
        let sends = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for partition: Int32 in 0..<3 {
                    group.addTask {
                        for i in 0..<10 {
                            try await producer.send(topic: topic, key: nil, value: bytes("p\(partition)-\(i)"), partition: partition)
                            done.append([KafkaMessage(topic: topic, partition: partition, offset: 0, key: nil, value: [])])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .seconds(2))
        let whileDown = done.messages.count
        XCTAssertLessThan(whileDown, 30, "the partition led by the downed broker cannot be acknowledged")
        try cluster.setBrokerUp(2)
        try await sends.value
        XCTAssertEqual(done.messages.count, 30)
        await producer.close()

        let consumer = try makeConsumer(group: "outage", topics: [topic])
        var received = try await collect(consumer, timeout: .seconds(20)) { $0.count >= 31 }
        received += try await consumer.poll(maxMessages: 100, timeout: .milliseconds(500))
        let started = ContinuousClock.now
        await consumer.close(timeout: .seconds(5))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(7))
        XCTAssertEqual(received.count, 31)
        XCTAssertEqual(Set(received.map { text($0.value) }).count, 31, "no duplicates")
    }

    /// `close` returns after its timeout even if closing is stuck (here: a slow revoke handler).
    func testCloseWatchdogReturnsOnTime() async throws {
        let topic = "watchdog"
        try cluster.createTopic(topic, partitions: 1)
        let consumer = try makeConsumer(group: "watchdog", topics: [topic])
        let events = MessageSink()
        consumer.setRebalanceHandler { event in
            if case .revoked = event {
                Thread.sleep(forTimeInterval: 3)
                events.record(event)
            }
        }
        let assigned = try await pollUntil([consumer], timeout: .seconds(20)) { !(try consumer.assignment().isEmpty) }
        XCTAssertTrue(assigned)
        let started = ContinuousClock.now
        await consumer.close(timeout: .seconds(1))
        let elapsed = ContinuousClock.now - started
        XCTAssertLessThan(elapsed, .milliseconds(2500))
        XCTAssertTrue(events.events.isEmpty, "handler still running when close gave up")
        // The abandoned close carries on in the background and finishes.
        try await Task.sleep(for: .seconds(3))
        XCTAssertEqual(events.events.count, 1)
    }

    /// After a fatal error the producer refuses new messages with an `isFatal` error;
    /// a new producer works.
    func testFatalErrorRequiresNewProducer() async throws {
        let topic = "fatal"
        try cluster.createTopic(topic, partitions: 1)
        let producer = try makeProducer()
        try await producer.send(topic: topic, key: nil, value: bytes("before"))
        try producer.triggerFatalErrorForTesting(reason: "simulated")
        let deadline = ContinuousClock.now + .seconds(5)
        while producer.fatalError == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertNotNil(producer.fatalError)
        do {
            try await producer.send(topic: topic, key: nil, value: bytes("after"))
            XCTFail("send after a fatal error must throw")
        } catch let error as KafkaError {
            XCTAssertTrue(error.isFatal)
            XCTAssertFalse(error.isRetriable)
            XCTAssertEqual(error.name, "_FATAL")
        }
        await producer.close()
        let replacement = try makeProducer()
        let written = try await replacement.send(topic: topic, key: nil, value: bytes("after"))
        XCTAssertEqual(written.offset, 1)
        await replacement.close()
    }

    /// Bad configuration is reported with the offending key, and nothing leaks.
    func testInvalidPropertyNamesTheKey() throws {
        XCTAssertThrowsError(
            try KafkaProducer(bootstrapServers: cluster.bootstrapServers, properties: ["no.such.key": "1"], logger: logger)
        ) { error in
            let kafkaError = error as? KafkaError
            XCTAssertEqual(kafkaError?.name, "_INVALID_ARG")
            XCTAssertTrue(kafkaError?.message.contains("no.such.key") ?? false)
        }
    }
}
