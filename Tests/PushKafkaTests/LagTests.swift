import Foundation
import PushKafka
import XCTest

final class LagTests: KafkaClusterTestCase, @unchecked Sendable {
    /// `lag()` reports, per assigned partition, high watermark − position from
    /// librdkafka's cached values: 100 produced, 30 taken → 70 behind; all taken → 0.
    func testLagIsHighWatermarkMinusPositionPerAssignedPartition() async throws {
        let topic = "lagging"
        try cluster.createTopic(topic, partitions: 2)
        let producer = try makeProducer()
        for i in 0..<100 {
            try await producer.send(topic: topic, key: nil, value: bytes("m\(i)"), partition: 0)
        }
        for i in 0..<10 {
            try await producer.send(topic: topic, key: nil, value: bytes("n\(i)"), partition: 1)
        }
        let consumer = try makeConsumer(group: "lagging", topics: [topic])
        let p0 = KafkaTopicPartition(topic: topic, partition: 0)
        var taken: [Int32: Int64] = [0: 0, 1: 0]
        // Take exactly 30 of partition 0 (then pause it) and all 10 of partition 1.
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, taken[0] != 30 || taken[1] != 10 {
            for m in try await consumer.poll(maxMessages: 1, timeout: .milliseconds(200)) {
                taken[m.partition, default: 0] += 1
                if m.partition == 0, taken[0] == 30 { try consumer.pause([p0]) }
            }
        }
        XCTAssertEqual(taken, [0: 30, 1: 10])
        var lag: [KafkaPartitionLag] = []
        let lagDeadline = ContinuousClock.now + .seconds(10)
        repeat {
            lag = try consumer.lag()
            if lag.count == 2, lag.allSatisfy({ $0.highWatermark == ($0.partition.partition == 0 ? 100 : 10) }) { break }
            // Keeps the consumer served; partition 0 is paused, partition 1 has nothing left.
            _ = try await consumer.poll(maxMessages: 1, timeout: .milliseconds(100))
        } while ContinuousClock.now < lagDeadline
        let byPartition = Dictionary(uniqueKeysWithValues: lag.map { ($0.partition.partition, $0) })
        XCTAssertEqual(byPartition[0]?.highWatermark, 100)
        XCTAssertEqual(byPartition[0]?.position, 30)
        XCTAssertEqual(byPartition[0]?.messages, 70)
        XCTAssertEqual(byPartition[1]?.messages, 0)
        await consumer.close()
        await producer.close()
    }
}
