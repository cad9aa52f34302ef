import Foundation
import PushKafka
import XCTest

final class ProduceConsumeTests: KafkaClusterTestCase, @unchecked Sendable {
    /// 2,000 keyed messages over 6 partitions: each arrives exactly once, per-key order holds.
    func testEveryMessageExactlyOnceInKeyOrder() async throws {
        let topic = "orders"
        try cluster.createTopic(topic, partitions: 6)
        let producer = try makeProducer()
        let keys = 50
        let perKey = 40
        // One task per key sends that key's messages in order, each after the previous was acknowledged.
        let sent = try await withThrowingTaskGroup(of: [(String, Int32, Int64)].self) { group in
            for k in 0..<keys {
                group.addTask {
                    var written: [(String, Int32, Int64)] = []
                    for seq in 0..<perKey {
                        let value = "key-\(k):\(seq)"
                        let (partition, offset) = try await producer.send(
                            topic: topic, key: bytes("key-\(k)"), value: bytes(value))
                        written.append((value, partition, offset))
                    }
                    return written
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        XCTAssertEqual(sent.count, keys * perKey)
        let partitionCount = try await producer.partitionCount(topic: topic)
        XCTAssertEqual(partitionCount, 6)
        await producer.close()

        let consumer = try makeConsumer(group: "exactly-once", topics: [topic])
        var received = try await collect(consumer, timeout: .seconds(30)) { $0.count >= keys * perKey }
        // Anything extra (a duplicate) would show up now.
        received += try await consumer.poll(maxMessages: 500, timeout: .milliseconds(500))
        await consumer.close()

        XCTAssertEqual(received.count, keys * perKey)
        let positions = Set(received.map { "\($0.partition)/\($0.offset)" })
        XCTAssertEqual(positions.count, received.count, "duplicate deliveries")
        XCTAssertEqual(Set(received.map { text($0.value) }), Set(sent.map(\.0)))
        // Where the producer was told each message landed is where the consumer found it.
        let byPosition = Dictionary(uniqueKeysWithValues: received.map { ("\($0.partition)/\($0.offset)", text($0.value)) })
        for (value, partition, offset) in sent {
            XCTAssertEqual(byPosition["\(partition)/\(offset)"], value)
        }
        var nextSeq: [String: Int] = [:]
        var partitionOfKey: [String: Int32] = [:]
        for message in received {
            let key = text(message.key ?? [])
            let parts = text(message.value).split(separator: ":")
            XCTAssertEqual(parts.count, 2)
            XCTAssertEqual(String(parts[0]), key)
            let seq = Int(parts[1]) ?? -1
            XCTAssertEqual(seq, nextSeq[key, default: 0], "out of order for \(key)")
            nextSeq[key] = seq + 1
            XCTAssertEqual(partitionOfKey[key, default: message.partition], message.partition)
            partitionOfKey[key] = message.partition
        }
        XCTAssertEqual(Set(partitionOfKey.values).count > 1, true, "keys should spread over partitions")
    }

    /// Headers (repeated, empty, binary) and key/timestamp survive the round trip.
    func testHeadersRoundTrip() async throws {
        let topic = "headers"
        try cluster.createTopic(topic, partitions: 1)
        let producer = try makeProducer()
        let headers: [(name: String, value: [UInt8])] = [
            ("attempt", bytes("3")), ("empty", []), ("binary", [0, 1, 127, 255]), ("attempt", bytes("4")),
        ]
        let before = Date()
        let first = try await producer.send(topic: topic, key: bytes("user-1"), value: bytes("hello"), headers: headers)
        let second = try await producer.send(topic: topic, key: nil, value: bytes("no headers"))
        await producer.close()

        let consumer = try makeConsumer(group: "headers", topics: [topic])
        let received = try await collect(consumer, timeout: .seconds(20)) { $0.count >= 2 }
        await consumer.close()

        XCTAssertEqual(received.count, 2)
        guard received.count == 2 else { return }
        let message = received[0]
        XCTAssertEqual(message.partition, first.partition)
        XCTAssertEqual(message.offset, first.offset)
        XCTAssertEqual(message.key, bytes("user-1"))
        XCTAssertEqual(message.value, bytes("hello"))
        XCTAssertEqual(message.headers.map(\.name), ["attempt", "empty", "binary", "attempt"])
        XCTAssertEqual(message.headers.map(\.value), headers.map(\.value))
        XCTAssertEqual(message.header("attempt"), bytes("3"))
        let timestamp = try XCTUnwrap(message.timestamp)
        XCTAssertEqual(timestamp.timeIntervalSince(before), 0, accuracy: 10)
        XCTAssertEqual(received[1].offset, second.offset)
        XCTAssertNil(received[1].key)
        XCTAssertTrue(received[1].headers.isEmpty)
    }
}
