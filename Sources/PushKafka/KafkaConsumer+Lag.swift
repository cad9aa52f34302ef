import CRdKafka

/// Consumer lag of one assigned partition.
public struct KafkaPartitionLag: Sendable, Hashable {
    /// The partition.
    public var partition: KafkaTopicPartition
    /// The high watermark librdkafka last learnt from a fetch (offset of the next message produced).
    public var highWatermark: Int64
    /// The consumer's position: the offset of the next message it will return.
    public var position: Int64
    /// Messages behind: `highWatermark - position`, never negative.
    public var messages: Int64 { max(0, highWatermark - position) }

    public init(partition: KafkaTopicPartition, highWatermark: Int64, position: Int64) {
        self.partition = partition
        self.highWatermark = highWatermark
        self.position = position
    }
}

extension KafkaConsumer {
    /// Lag of every assigned partition whose high watermark and position are known,
    /// from librdkafka's cached values (`rd_kafka_get_watermark_offsets`,
    /// `rd_kafka_position`): no broker round trip, safe to call from any thread at any
    /// rate (e.g. a metrics scrape). A partition not fetched yet, or paused since long,
    /// may be missing or stale.
    public func lag() throws -> [KafkaPartitionLag] {
        try handle.withHandle { rk in
            var assigned: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
            let err = rd_kafka_assignment(rk, &assigned)
            defer { if let assigned { rd_kafka_topic_partition_list_destroy(assigned) } }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "assignment") }
            guard let assigned, assigned.pointee.cnt > 0 else { return [] }
            let positionErr = rd_kafka_position(rk, assigned)
            guard positionErr == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(positionErr, "position") }
            var result: [KafkaPartitionLag] = []
            for element in KafkaPartitionList.elements(assigned) where element.offset >= 0 {
                var low: Int64 = -1
                var high: Int64 = -1
                let w = rd_kafka_get_watermark_offsets(rk, element.tp.topic, element.tp.partition, &low, &high)
                guard w == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else { continue }
                result.append(KafkaPartitionLag(partition: element.tp, highWatermark: high, position: element.offset))
            }
            return result
        }
    }
}
