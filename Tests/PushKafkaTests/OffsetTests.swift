import Foundation
import PushKafka
import XCTest

final class OffsetTests: KafkaClusterTestCase, @unchecked Sendable {
    /// Only stored offsets are committed, and a new member resumes exactly after them.
    func testNewConsumerResumesAfterStoredOffsets() async throws {
        let topic = "offsets"
        try cluster.createTopic(topic, partitions: 2)
        let producer = try makeProducer()
        for partition: Int32 in [0, 1] {
            for i in 0..<20 {
                try await producer.send(topic: topic, key: nil, value: bytes("p\(partition)-\(i)"), partition: partition)
            }
        }
        await producer.close()
        let p0 = KafkaTopicPartition(topic: topic, partition: 0)
        let p1 = KafkaTopicPartition(topic: topic, partition: 1)

        let first = try makeConsumer(group: "resume", topics: [topic])
        let all = try await collect(first, timeout: .seconds(20)) { $0.count >= 40 }
        XCTAssertEqual(all.count, 40)
        // Processed p0 up to offset 6 and p1 up to 11: store next offsets 7 and 12.
        try first.storeOffset(p0, offset: 7)
        try first.storeOffset(p1, offset: 12)
        try await first.commit()
        let committed = try await first.committed([p0, p1], timeout: .seconds(5))
        XCTAssertEqual(committed, [p0: 7, p1: 12])
        let high = try await first.watermarks(p0).high
        XCTAssertEqual(high, 20)
        await first.close()

        let second = try makeConsumer(group: "resume", topics: [topic])
        var resumed = try await collect(second, timeout: .seconds(20)) { $0.count >= 13 + 8 }
        resumed += try await second.poll(maxMessages: 100, timeout: .milliseconds(300))
        await second.close()

        let fromP0 = resumed.filter { $0.partition == 0 }.map(\.offset)
        let fromP1 = resumed.filter { $0.partition == 1 }.map(\.offset)
        XCTAssertEqual(fromP0.first, 7)
        XCTAssertEqual(fromP1.first, 12)
        XCTAssertEqual(fromP0, Array(7..<20))
        XCTAssertEqual(fromP1, Array(12..<20))
    }

    /// Storing an offset for a partition that is not assigned is refused.
    func testStoreOffsetForUnassignedPartitionThrows() async throws {
        try cluster.createTopic("unassigned", partitions: 1)
        let consumer = try makeConsumer(group: "unassigned", topics: ["unassigned"])
        XCTAssertThrowsError(try consumer.storeOffset(KafkaTopicPartition(topic: "unassigned", partition: 0), offset: 1))
        await consumer.close()
    }
}
