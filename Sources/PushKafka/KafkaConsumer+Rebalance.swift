import CRdKafka
import Logging

extension KafkaConsumer {
    /// Sets the handler told about assignment changes. It runs synchronously on the poll
    /// thread inside librdkafka's rebalance callback: BEFORE the incremental unassign for
    /// `.revoked`/`.lost` (so it can drain in-flight work and store offsets, which are
    /// then committed before the partitions go) and AFTER the incremental assign for
    /// `.assigned`. It may block briefly; it must not call `poll` or `close`.
    public func setRebalanceHandler(_ handler: @escaping @Sendable (KafkaRebalanceEvent) -> Void) {
        context.rebalanceHandler.withLock { $0 = handler }
    }

    /// librdkafka's rebalance callback (runs on the thread that polls).
    static func rebalance(
        rk: OpaquePointer, err: rd_kafka_resp_err_t, partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
    ) {
        guard let context = KafkaClientContext.of(rk) else { return }
        let logger = context.logger
        let cooperative = rd_kafka_rebalance_protocol(rk).map { String(cString: $0) } == "COOPERATIVE"
        let changed = KafkaPartitionList.partitions(partitions)
        let handler = context.rebalanceHandler.withLock { $0 }
        let metadata: Logger.Metadata = [
            "kafka.partitions": "\(changed.map(\.description).joined(separator: ","))",
            "kafka.rebalance_protocol": "\(cooperative ? "COOPERATIVE" : "EAGER")",
        ]
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            logger.info("Kafka partitions assigned", metadata: metadata)
            if cooperative {
                if let error = rd_kafka_incremental_assign(rk, partitions) {
                    logger.error("incremental assign failed: \(KafkaError.consuming(error, context: "incremental_assign"))")
                }
            } else {
                let result = rd_kafka_assign(rk, partitions)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    logger.error("assign failed: \(KafkaError.rdKafka(result, "assign"))")
                }
            }
            if !changed.isEmpty { handler?(.assigned(changed)) }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(rk) != 0
            logger.info(lost ? "Kafka partitions lost" : "Kafka partitions revoked", metadata: metadata)
            if !changed.isEmpty { handler?(lost ? .lost(changed) : .revoked(changed)) }
            context.paused.withLock { $0.subtract(changed) }
            if cooperative {
                if let error = rd_kafka_incremental_unassign(rk, partitions) {
                    logger.error("incremental unassign failed: \(KafkaError.consuming(error, context: "incremental_unassign"))")
                }
            } else {
                _ = rd_kafka_assign(rk, nil)
                context.paused.withLock { $0.removeAll() }
            }
        default:
            logger.error("Kafka rebalance error", metadata: metadata.merging(["kafka.error": "\(KafkaError.rdKafka(err))"]) { $1 })
            _ = rd_kafka_assign(rk, nil)
            context.paused.withLock { $0.removeAll() }
        }
    }
}
