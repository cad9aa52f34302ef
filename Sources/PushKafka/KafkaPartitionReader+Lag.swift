import CRdKafka
import Foundation

extension KafkaPartitionReader {
    /// The number of partitions of `topic`, from the cluster's metadata.
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) async throws -> Int {
        try await thread.run { [handle] in
            try handle.withHandle { rk in try KafkaMetadata.partitionCount(rk: rk, topic: topic, timeoutMs: timeout.kafkaMilliseconds) }
        }
    }

    /// This reader's group's lag on `topic`: per partition, the reported end
    /// minus the group's committed offset (the partition's start when the
    /// group has committed none), summed. A report of the broker's end offsets
    /// (see `reportedRange`), for operators, never a reading limit.
    public func groupLag(topic: String, timeout: Duration = .seconds(10)) async throws -> Int64 {
        var lag: Int64 = 0
        for partition in 0..<Int32(clamping: try await partitionCount(topic: topic, timeout: timeout)) {
            let tp = KafkaTopicPartition(topic: topic, partition: partition)
            let range = try await reportedRange(tp, timeout: timeout)
            let committed = try await committedOffset(tp, timeout: timeout) ?? range.start
            lag += max(0, range.end - max(committed, range.start))
        }
        return lag
    }
}
