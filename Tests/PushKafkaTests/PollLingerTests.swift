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

    /// `poll(maxBytes:)` ends once its messages' keys and values reach the
    /// bound (the worker's `max_in_flight_bytes`), passing it by at most one
    /// message; what it left is the next poll's, in order.
    func testAPollEndsAtItsByteBound() async throws {
        let topic = "max-bytes"
        try cluster.createTopic(topic, partitions: 1)
        let producer = try makeProducer()
        for i in 0..<6 { try await producer.send(topic: topic, key: nil, value: [UInt8](repeating: UInt8(i), count: 1_000)) }
        await producer.close()
        let consumer = try makeConsumer(group: "max-bytes", topics: [topic])
        var first: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while first.isEmpty, ContinuousClock.now < deadline {
            first = try await consumer.poll(maxMessages: 100, maxBytes: 2_500, timeout: .milliseconds(500), linger: .seconds(2))
        }
        XCTAssertEqual(first.map(\.offset), [0, 1, 2], "2,000 bytes are under the bound, the third message passes it")
        let rest = try await collect(consumer, timeout: .seconds(20)) { $0.count >= 3 }
        XCTAssertEqual(rest.map(\.offset), [3, 4, 5])
        XCTAssertEqual(rest.map { $0.value.first }, [3, 4, 5])
        await consumer.close()
    }

    /// Producers in other languages compress (Java's `compression.type=lz4`,
    /// Go's snappy, zstd): every codec librdkafka was built with arrives as
    /// the bytes that were sent, key and headers included.
    func testCompressedMessagesArriveAsSent() async throws {
        let topic = "compressed"
        try cluster.createTopic(topic, partitions: 1)
        let codecs = ["gzip", "snappy", "lz4", "zstd"]
        var sent: [[UInt8]] = []
        for codec in codecs {
            let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers,
                                             properties: ["linger.ms": "5", "compression.type": codec], logger: logger)
            for n in [1, 20_000] {
                let value = Array(#"{"codec": "\#(codec)", "pad": ""#.utf8) + [UInt8](repeating: 0x61, count: n) + Array(#"", "nul": "\u0000"}"#.utf8)
                try await producer.send(topic: topic, key: Array(codec.utf8), value: value, headers: [("codec", Array(codec.utf8))])
                sent.append(value)
            }
            await producer.close()
        }
        let consumer = try makeConsumer(group: "compressed", topics: [topic])
        let received = try await collect(consumer, timeout: .seconds(30)) { $0.count >= sent.count }
        await consumer.close()
        XCTAssertEqual(received.map(\.value), sent)
        XCTAssertEqual(received.map { String(decoding: $0.key ?? [], as: UTF8.self) }, codecs.flatMap { [$0, $0] })
        XCTAssertEqual(received.map { $0.header("codec").map { String(decoding: $0, as: UTF8.self) } }, codecs.flatMap { [$0, $0] })
    }
}
