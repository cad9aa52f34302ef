import Metrics
import PushCore
import PushKafka

/// Kafka-side events: consumption, lag, assignment, receipts.
extension WorkerMetrics {
    /// Messages taken from a Kafka topic (intake or retry).
    public func consumed(topic: String, count: Int = 1) {
        guard count > 0 else { return }
        counter(MetricNames.messagesConsumed, [label("topic", topic)]).increment(by: count)
    }

    /// Consumer lag of one assigned partition, in messages.
    public func setLag(topic: String, partition: Int32, messages: Int64) {
        gauge(MetricNames.consumerLag, [label("topic", topic), ("partition", String(partition))])
            .record(max(messages, 0))
    }

    /// Drops the lag series of every partition not in `assigned` (call after
    /// a rebalance): a revoked partition's lag is its new owner's to report.
    public func retainLag(assigned: [(topic: String, partition: Int32)]) {
        let keep = Set(assigned.map { [$0.topic, String($0.partition)] })
        // Series labels are stored as [name, value, name, value].
        removeGauges(MetricNames.consumerLag) { labels in
            labels.count == 4 && keep.contains([labels[1], labels[3]])
        }
    }

    /// Consumer lag of every assigned partition and of each lane (its
    /// partitions summed); series of partitions no longer assigned go.
    public func export(lag: [KafkaPartitionLag], topics: TopicNames) {
        var lanes: [Lane: Int64] = Dictionary(uniqueKeysWithValues: Lane.allCases.map { ($0, 0) })
        for entry in lag {
            setLag(topic: entry.partition.topic, partition: entry.partition.partition, messages: entry.messages)
            if let lane = topics.lane(of: entry.partition.topic) { lanes[lane, default: 0] += entry.messages }
        }
        retainLag(assigned: lag.map { ($0.partition.topic, $0.partition.partition) })
        for (lane, messages) in lanes { gauge(MetricNames.laneLag, [("lane", lane.rawValue)]).record(max(messages, 0)) }
    }

    /// Partitions currently assigned to this worker.
    public func setPartitionsAssigned(_ count: Int) {
        gauge(MetricNames.partitionsAssigned).record(count)
    }

    /// A device receipt was applied; `kind` is `delivered` or `opened`.
    public func receipt(kind: String, count: Int = 1) {
        guard count > 0 else { return }
        let known = kind == "delivered" || kind == "opened" ? kind : LabelBudget.other
        counter(MetricNames.receipts, [("kind", known)]).increment(by: count)
    }
}
