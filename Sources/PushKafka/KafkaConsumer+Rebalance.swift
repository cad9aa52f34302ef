import CRdKafka
import Logging

extension KafkaConsumer {
    /// Sets the handler told about assignment changes. It runs synchronously on the poll
    /// thread inside librdkafka's rebalance callback: BEFORE the unassign for
    /// `.revoked`/`.lost` (so it can drain in-flight work and store offsets; for
    /// `.revoked` those are then committed synchronously before the partitions go) and
    /// AFTER the assign for `.assigned`. It may block briefly; it must not call `poll`
    /// or `close`.
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
            context.everAssigned.withLock { $0 = true }
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
            // Commit what the handler (and the work before it) stored, now and synchronously:
            // librdkafka's own commit after the unassign is asynchronous and can reach the
            // coordinator after this member's rejoin started the next round, which refuses it
            // (REBALANCE_IN_PROGRESS) and makes the next owner replay finished messages.
            let stored = context.storedOffsets.withLock { offsets in
                changed.compactMap { tp in offsets.removeValue(forKey: tp).map { (tp, $0) } }
            }
            if !lost, !stored.isEmpty { commitRevoked(rk: rk, stored, logger: logger) }
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
            context.storedOffsets.withLock { $0.removeAll() }
            logger.error("Kafka rebalance error", metadata: metadata.merging(["kafka.error": "\(KafkaError.rdKafka(err))"]) { $1 })
            _ = rd_kafka_assign(rk, nil)
            context.paused.withLock { $0.removeAll() }
        }
    }

    /// Synchronously commits `offsets` of partitions being revoked (called inside the
    /// rebalance callback, before they are unassigned).
    static func commitRevoked(rk: OpaquePointer, _ offsets: [(KafkaTopicPartition, Int64)], logger: Logger) {
        let err = KafkaPartitionList.with(offsets.map(\.0), offsets: offsets.map(\.1)) { list -> rd_kafka_resp_err_t in
            let err = rd_kafka_commit(rk, list, 0)
            if err == RD_KAFKA_RESP_ERR_NO_ERROR, let (tp, partitionError) = KafkaPartitionList.firstError(list) {
                logger.warning("offset commit of a revoked partition failed; its next owner resumes from the last committed offset",
                               metadata: ["kafka.partition": "\(tp)", "kafka.error": "\(KafkaError.rdKafka(partitionError))"])
            }
            return err
        }
        if err == RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.debug("committed revoked partitions", metadata: [
                "kafka.offsets": "\(offsets.map { "\($0.0)@\($0.1)" }.joined(separator: ","))",
            ])
        } else if err == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS {
            // A broker accepts commits of the current generation while it prepares a rebalance;
            // librdkafka's mock cluster does not. What auto-commit sent (every second) stands.
            logger.notice("offset commit of revoked partitions refused during the rebalance; their next owner resumes from the last auto-committed offset",
                          metadata: ["kafka.error": "\(KafkaError.rdKafka(err))", "kafka.partitions": "\(offsets.map { "\($0.0)" })"])
        } else if err != RD_KAFKA_RESP_ERR__NO_OFFSET {
            logger.warning("offset commit of revoked partitions failed; their next owner resumes from the last committed offset",
                           metadata: ["kafka.error": "\(KafkaError.rdKafka(err))", "kafka.partitions": "\(offsets.map { "\($0.0)" })"])
        }
    }
}
