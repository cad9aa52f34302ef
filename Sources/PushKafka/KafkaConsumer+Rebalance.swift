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
            let resumed = resumeRefused(context: context, partitions: partitions, logger: logger)
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
            if !resumed.isEmpty {
                // Stored again, so auto-commit makes them the group's committed offsets.
                _ = KafkaPartitionList.with(resumed.map(\.0), offsets: resumed.map(\.1)) { rd_kafka_offsets_store(rk, $0) }
                context.storedOffsets.withLock { offsets in for (tp, offset) in resumed { offsets[tp] = offset } }
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
            if lost {
                context.refusedRevokeOffsets.withLock { $0.removeAll() }
            } else if !stored.isEmpty, !commitRevoked(rk: rk, stored, logger: logger), !cooperative {
                context.refusedRevokeOffsets.withLock { refused in for (tp, offset) in stored { refused[tp] = offset } }
            }
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
            context.refusedRevokeOffsets.withLock { $0.removeAll() }
            logger.error("Kafka rebalance error", metadata: metadata.merging(["kafka.error": "\(KafkaError.rdKafka(err))"]) { $1 })
            _ = rd_kafka_assign(rk, nil)
            context.paused.withLock { $0.removeAll() }
        }
    }

    /// Sets the start offset of every partition in `partitions` (the list about to be
    /// assigned) that this member revoked in the previous eager round with a refused
    /// commit, and forgets all such offsets (they are valid for this assignment only).
    /// Returns what it set.
    static func resumeRefused(
        context: KafkaClientContext, partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, logger: Logger
    ) -> [(KafkaTopicPartition, Int64)] {
        let refused = context.refusedRevokeOffsets.withLock { refused in defer { refused = [:] }; return refused }
        guard !refused.isEmpty, let partitions, let elems = partitions.pointee.elems else { return [] }
        var resumed: [(KafkaTopicPartition, Int64)] = []
        for index in 0..<Int(partitions.pointee.cnt) {
            let topic = elems[index].topic.map { String(cString: $0) } ?? ""
            let tp = KafkaTopicPartition(topic: topic, partition: elems[index].partition)
            if let offset = refused[tp] {
                elems[index].offset = offset
                resumed.append((tp, offset))
            }
        }
        if !resumed.isEmpty {
            logger.info("resuming partitions back from the last round at this member's own offsets", metadata: [
                "kafka.offsets": "\(resumed.map { "\($0.0)@\($0.1)" }.joined(separator: ","))",
            ])
        }
        return resumed
    }

    /// Synchronously commits `offsets` of partitions being revoked (called inside the
    /// rebalance callback, before they are unassigned). True if the group has them.
    @discardableResult
    static func commitRevoked(rk: OpaquePointer, _ offsets: [(KafkaTopicPartition, Int64)], logger: Logger) -> Bool {
        let err = KafkaPartitionList.with(offsets.map(\.0), offsets: offsets.map(\.1)) { list -> rd_kafka_resp_err_t in
            let err = rd_kafka_commit(rk, list, 0)
            if err == RD_KAFKA_RESP_ERR_NO_ERROR, let (tp, partitionError) = KafkaPartitionList.firstError(list) {
                logger.warning("offset commit of a revoked partition failed; its next owner resumes from the last committed offset",
                               metadata: ["kafka.partition": "\(tp)", "kafka.error": "\(KafkaError.rdKafka(partitionError))"])
            }
            return err
        }
        if err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET {
            logger.debug("committed revoked partitions", metadata: [
                "kafka.offsets": "\(offsets.map { "\($0.0)@\($0.1)" }.joined(separator: ","))",
            ])
        } else if err == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS {
            // A broker accepts commits of the current generation while it prepares a rebalance;
            // librdkafka's mock cluster does not. What auto-commit sent (every second) stands.
            logger.notice("offset commit of revoked partitions refused during the rebalance; another next owner resumes from the last auto-committed offset, this member at its own",
                          metadata: ["kafka.error": "\(KafkaError.rdKafka(err))", "kafka.partitions": "\(offsets.map { "\($0.0)" })"])
        } else {
            logger.warning("offset commit of revoked partitions failed; their next owner resumes from the last committed offset",
                           metadata: ["kafka.error": "\(KafkaError.rdKafka(err))", "kafka.partitions": "\(offsets.map { "\($0.0)" })"])
        }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET
    }
}
