import CRdKafka

/// Cluster metadata queries shared by producer and consumer (blocking: call them on a
/// dedicated thread).
enum KafkaMetadata {
    /// Number of partitions of `topic`, from a metadata request to the cluster.
    static func partitionCount(rk: OpaquePointer, topic: String, timeoutMs: Int32) throws -> Int {
        guard let rkt = rd_kafka_topic_new(rk, topic, nil) else {
            throw KafkaError.rdKafka(rd_kafka_last_error(), "topic handle for \(topic)")
        }
        defer { rd_kafka_topic_destroy(rkt) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(rk, 0, rkt, &metadata, timeoutMs)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.rdKafka(err, "metadata for \(topic)")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        guard metadata.pointee.topic_cnt > 0, let topics = metadata.pointee.topics else {
            throw KafkaError.rdKafka(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "metadata for \(topic)")
        }
        let entry = topics[0]
        guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError.rdKafka(entry.err, "metadata for \(topic)")
        }
        return Int(entry.partition_cnt)
    }
}
