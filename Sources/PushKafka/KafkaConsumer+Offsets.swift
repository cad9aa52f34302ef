import CRdKafka

extension KafkaConsumer {
    /// Stores `offset` (the NEXT offset to consume: last processed + 1) for commit.
    /// Thread-safe and non-blocking. Throws `_STATE` if the partition is not assigned.
    public func storeOffset(_ tp: KafkaTopicPartition, offset: Int64) throws {
        try storeOffsets([tp: offset])
    }

    /// Stores several offsets at once (see `storeOffset`).
    public func storeOffsets(_ offsets: [KafkaTopicPartition: Int64]) throws {
        guard !offsets.isEmpty else { return }
        let entries = Array(offsets)
        try handle.withHandle { rk in
            try KafkaPartitionList.with(entries.map(\.key), offsets: entries.map(\.value)) { list in
                let err = rd_kafka_offsets_store(rk, list)
                let stored = KafkaPartitionList.elements(list).filter { $0.err == RD_KAFKA_RESP_ERR_NO_ERROR }
                if err == RD_KAFKA_RESP_ERR_NO_ERROR, !stored.isEmpty {
                    context.storedOffsets.withLock { offsets in for element in stored { offsets[element.tp] = element.offset } }
                }
                if let (tp, partitionError) = KafkaPartitionList.firstError(list) {
                    throw KafkaError.rdKafka(partitionError, "store offset for \(tp)")
                }
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "store offsets") }
            }
        }
    }

    /// Synchronously commits the stored offsets (on the control thread). Nothing stored
    /// since the last commit is not an error.
    public func commit() async throws {
        try await controlThread.run { [handle] in
            let err = try handle.withHandle { rk in rd_kafka_commit(rk, nil, 0) }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET else {
                throw KafkaError.rdKafka(err, "commit")
            }
        }
    }

    /// The group's committed offsets for `partitions`; partitions with no committed
    /// offset are absent from the result.
    public func committed(_ partitions: [KafkaTopicPartition], timeout: Duration) async throws
        -> [KafkaTopicPartition: Int64]
    {
        try await controlThread.run { [handle] in
            try handle.withHandle { rk in
                try KafkaPartitionList.with(partitions) { list in
                    let err = rd_kafka_committed(rk, list, timeout.kafkaMilliseconds)
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "committed") }
                    var result: [KafkaTopicPartition: Int64] = [:]
                    for element in KafkaPartitionList.elements(list) where element.offset >= 0 {
                        result[element.tp] = element.offset
                    }
                    return result
                }
            }
        }
    }

    /// Low and high watermark of a partition as the leader reports them (high is the
    /// offset the next message will get), e.g. to compute lag against `committed`.
    public func watermarks(_ tp: KafkaTopicPartition, timeout: Duration = .seconds(5)) async throws
        -> (low: Int64, high: Int64)
    {
        try await controlThread.run { [handle] in
            try handle.withHandle { rk in
                var low: Int64 = -1
                var high: Int64 = -1
                let err = rd_kafka_query_watermark_offsets(
                    rk, tp.topic, tp.partition, &low, &high, timeout.kafkaMilliseconds)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "watermarks of \(tp)") }
                return (low, high)
            }
        }
    }

    /// Number of partitions of `topic` (cluster metadata).
    public func partitionCount(topic: String, timeout: Duration = .seconds(5)) async throws -> Int {
        try await controlThread.run { [handle] in
            try handle.withHandle { rk in
                try KafkaMetadata.partitionCount(rk: rk, topic: topic, timeoutMs: timeout.kafkaMilliseconds)
            }
        }
    }
}
