import CRdKafka
import Logging

extension KafkaConsumer {
    /// Stops fetching from `partitions` (still assigned) until `resume`. Throws the
    /// first per-partition error (e.g. not assigned); the others are still paused.
    public func pause(_ partitions: [KafkaTopicPartition]) throws {
        guard !partitions.isEmpty else { return }
        try handle.withHandle { rk in
            try KafkaPartitionList.with(partitions) { list in
                let err = rd_kafka_pause_partitions(rk, list)
                let elements = KafkaPartitionList.elements(list)
                let paused = elements.filter { $0.err == RD_KAFKA_RESP_ERR_NO_ERROR }.map(\.tp)
                context.paused.withLock { $0.formUnion(paused) }
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "pause") }
                if let (tp, partitionError) = KafkaPartitionList.firstError(list) {
                    throw KafkaError.rdKafka(partitionError, "pause \(tp)")
                }
            }
        }
    }

    /// Resumes those of `partitions` that this consumer paused. Others are skipped on
    /// purpose: in librdkafka 2.0.2 resuming a partition that was not paused can rewind it.
    public func resume(_ partitions: [KafkaTopicPartition]) throws {
        let toResume = context.paused.withLock { paused in partitions.filter { paused.contains($0) } }
        if toResume.count < partitions.count {
            logger.debug(
                "not resuming partitions that are not paused",
                metadata: ["kafka.partitions": "\(partitions.filter { !toResume.contains($0) })"])
        }
        guard !toResume.isEmpty else { return }
        try handle.withHandle { rk in
            try KafkaPartitionList.with(toResume) { list in
                let err = rd_kafka_resume_partitions(rk, list)
                let resumed = KafkaPartitionList.elements(list).filter { $0.err == RD_KAFKA_RESP_ERR_NO_ERROR }.map(\.tp)
                context.paused.withLock { $0.subtract(resumed) }
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "resume") }
                if let (tp, partitionError) = KafkaPartitionList.firstError(list) {
                    throw KafkaError.rdKafka(partitionError, "resume \(tp)")
                }
            }
        }
    }

    /// Partitions this consumer paused and has not resumed.
    public var pausedPartitions: Set<KafkaTopicPartition> { context.paused.withLock { $0 } }

    /// The current assignment.
    public func assignment() throws -> [KafkaTopicPartition] {
        try handle.withHandle { rk in
            var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
            let err = rd_kafka_assignment(rk, &list)
            defer { if let list { rd_kafka_topic_partition_list_destroy(list) } }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "assignment") }
            return KafkaPartitionList.partitions(list)
        }
    }
}
