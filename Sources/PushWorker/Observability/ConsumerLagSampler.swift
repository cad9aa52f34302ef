import Logging
import PushKafka

/// Samples `pushfleet_consumer_lag{topic,partition}` for the partitions a
/// consumer owns: high watermark minus the group's committed offset (the
/// low watermark when nothing is committed yet). Queries run on the
/// consumer's control thread, never on the poll loop; call `sample()` from a
/// task every 10–15 s and after rebalances.
public struct ConsumerLagSampler: Sendable {
    let consumer: KafkaConsumer
    let metrics: WorkerMetrics
    let logger: Logger
    let timeout: Duration

    public init(consumer: KafkaConsumer, metrics: WorkerMetrics, logger: Logger, timeout: Duration = .seconds(5)) {
        self.consumer = consumer
        self.metrics = metrics
        self.logger = logger
        self.timeout = timeout
    }

    /// One round: sets the lag of every assigned partition and drops the
    /// series of partitions no longer assigned. Failures are logged at debug
    /// and leave the previous values (a broker may be briefly away).
    public func sample() async {
        do {
            let assigned = try consumer.assignment()
            metrics.retainLag(assigned: assigned.map { ($0.topic, $0.partition) })
            guard !assigned.isEmpty else { return }
            let committed = try await consumer.committed(assigned, timeout: timeout)
            for tp in assigned {
                let marks = try await consumer.watermarks(tp, timeout: timeout)
                let lag = ConsumerLagSampler.lag(high: marks.high, low: marks.low, committed: committed[tp])
                metrics.setLag(topic: tp.topic, partition: tp.partition, messages: lag)
            }
        } catch {
            logger.debug("consumer lag not sampled", metadata: ["error": "\(error)"])
        }
    }

    /// Messages between the committed position and the end of the partition.
    static func lag(high: Int64, low: Int64, committed: Int64?) -> Int64 {
        max(high - max(committed ?? low, low), 0)
    }
}
