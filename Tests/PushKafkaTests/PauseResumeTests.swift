import Foundation
import PushKafka
import XCTest

final class PauseResumeTests: KafkaClusterTestCase, @unchecked Sendable {
    /// A paused partition yields nothing; once resumed it continues at the next offset,
    /// and the never-paused partition is not rewound.
    func testPausedPartitionYieldsNothingAndResumesInPlace() async throws {
        let topic = "pausing"
        try cluster.createTopic(topic, partitions: 2)
        let p0 = KafkaTopicPartition(topic: topic, partition: 0)
        let p1 = KafkaTopicPartition(topic: topic, partition: 1)
        let producer = try makeProducer()
        func produce(_ count: Int, round: Int) async throws {
            for partition: Int32 in [0, 1] {
                for i in 0..<count {
                    try await producer.send(topic: topic, key: nil, value: bytes("r\(round)-\(i)"), partition: partition)
                }
            }
        }
        try await produce(10, round: 1)

        let consumer = try makeConsumer(group: "pausing", topics: [topic])
        let initial = try await collect(consumer, timeout: .seconds(20)) { $0.count >= 20 }
        XCTAssertEqual(initial.count, 20)

        try consumer.pause([p0])
        XCTAssertEqual(consumer.pausedPartitions, [p0])
        try await produce(10, round: 2)
        var whilePaused = try await collect(consumer, timeout: .seconds(10)) { $0.count >= 10 }
        whilePaused += try await consumer.poll(maxMessages: 100, timeout: .seconds(1))
        XCTAssertEqual(whilePaused.filter { $0.partition == 0 }.count, 0, "paused partition must yield nothing")
        XCTAssertEqual(whilePaused.filter { $0.partition == 1 }.map(\.offset), Array(10..<20))

        // p1 was never paused: resume must leave it alone (no rewind).
        try consumer.resume([p0, p1])
        XCTAssertTrue(consumer.pausedPartitions.isEmpty)
        var afterResume = try await collect(consumer, timeout: .seconds(10)) { $0.count >= 10 }
        afterResume += try await consumer.poll(maxMessages: 100, timeout: .seconds(1))
        await consumer.close()
        await producer.close()

        XCTAssertEqual(afterResume.filter { $0.partition == 0 }.map(\.offset), Array(10..<20))
        XCTAssertEqual(afterResume.filter { $0.partition == 1 }.count, 0, "p1 must not be re-delivered")
        XCTAssertEqual(afterResume.first.map { text($0.value) }, "r2-0")
    }
}
