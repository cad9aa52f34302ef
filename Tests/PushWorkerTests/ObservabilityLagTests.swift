import Foundation
import Logging
import PushKafka
import XCTest

@testable import PushWorker

/// `ConsumerLagSampler` against librdkafka's mock cluster: lag is what was
/// produced minus what the group committed, per assigned partition.
final class ObservabilityLagTests: XCTestCase {
    func testLagFollowsProducedAndCommittedOffsets() async throws {
        var logger = Logger(label: "test.lag")
        logger.logLevel = .warning
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        let topic = "push.notifications"
        try cluster.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: logger)
        var produced: [Int32: Int64] = [:]
        for i in 0..<20 {
            let at = try await producer.send(topic: topic, key: Array("k\(i)".utf8), value: Array("v\(i)".utf8),
                                             partition: Int32(i % 2))
            produced[at.partition, default: 0] += 1
        }
        await producer.close()
        XCTAssertEqual(produced, [0: 10, 1: 10])

        let consumer = try KafkaConsumer(
            bootstrapServers: cluster.bootstrapServers, groupID: "lag-test", topics: [topic],
            properties: ["enable.auto.commit": "false", "session.timeout.ms": "3000", "heartbeat.interval.ms": "300",
                         "fetch.wait.max.ms": "50"],
            logger: logger)
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        let sampler = ConsumerLagSampler(consumer: consumer, metrics: metrics, logger: logger)

        // Read 12 messages (polling also joins the group), commit what was read.
        var taken: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while taken.count < 12, ContinuousClock.now < deadline {
            taken += try await consumer.poll(maxMessages: 12 - taken.count, timeout: .milliseconds(200))
        }
        XCTAssertEqual(taken.count, 12)
        var next: [KafkaTopicPartition: Int64] = [:]
        for m in taken { next[m.topicPartition] = max(next[m.topicPartition] ?? 0, m.offset + 1) }
        try consumer.storeOffsets(next)
        try await consumer.commit()

        await sampler.sample()
        let lag = lagSamples(exposition)
        XCTAssertEqual(lag.count, 2, exposition.text())
        XCTAssertEqual(lag.values.reduce(0, +), 8, exposition.text())
        for partition: Int32 in [0, 1] {
            let tp = KafkaTopicPartition(topic: topic, partition: partition)
            XCTAssertEqual(lag["\(partition)"], Double(10 - (next[tp] ?? 0)), "partition \(partition)")
        }
        await consumer.close()
    }

    /// partition label → lag value.
    private func lagSamples(_ exposition: PrometheusExposition) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in exposition.text().split(separator: "\n") where line.hasPrefix("pushfleet_consumer_lag{") {
            guard let p = line.range(of: "partition=\""), let space = line.lastIndex(of: " ") else { continue }
            let partition = line[p.upperBound...].prefix { $0 != "\"" }
            result[String(partition)] = Double(line[line.index(after: space)...])
        }
        return result
    }
}
