import Metrics

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
