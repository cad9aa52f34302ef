import CRdKafka
import Foundation
import Logging

/// Reads single messages by offset (assign, never subscribe) and reads or commits one
/// group's offsets without joining that group: operator tools such as `pushfleet skip`.
///
/// Without a subscription this client never joins the group, so it never takes
/// partitions from running workers and never runs an assignor (closing it cannot hit
/// librdkafka 2.0.2's cooperative-sticky assertion). Its commits are "simple" commits
/// (generation -1): a broker accepts them only while the group has no members.
///
/// Blocking calls run on a dedicated thread. `@unchecked Sendable` is safe: the
/// handle is borrowed under `KafkaHandle`'s lock, and nothing else is mutable.
public final class KafkaPartitionReader: @unchecked Sendable {
    let handle: KafkaHandle
    let logger: Logger
    let groupID: String
    let thread = KafkaBlockingThread(name: "kafka.reader")

    /// A consumer client of `groupID` (auto-commit off, out-of-range reads are errors).
    public init(bootstrapServers: String, groupID: String, properties: [String: String] = [:], logger: Logger) throws {
        var all: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "group.id": groupID,
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "auto.offset.reset": "error",
            "enable.partition.eof": "true",
            "client.id": "pushkafka-reader",
        ]
        all.merge(properties) { _, override in override }
        let conf = try KafkaConf.make(all)
        let retained = installCommonCallbacks(on: conf, context: KafkaClientContext(logger: logger, maxLogLevel: 4))
        handle = try KafkaConf.newClient(type: RD_KAFKA_CONSUMER, conf: conf, context: retained)
        self.logger = logger
        self.groupID = groupID
    }

    /// The group's committed offset for `tp` (the next offset it will consume), nil if none.
    public func committedOffset(_ tp: KafkaTopicPartition, timeout: Duration = .seconds(10)) async throws -> Int64? {
        try await thread.run { [handle] in
            try handle.withHandle { rk in
                try KafkaPartitionList.with([tp]) { list in
                    let err = rd_kafka_committed(rk, list, timeout.kafkaMilliseconds)
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "committed offset of \(tp)") }
                    if let (_, partitionError) = KafkaPartitionList.firstError(list) {
                        throw KafkaError.rdKafka(partitionError, "committed offset of \(tp)")
                    }
                    let offset = KafkaPartitionList.elements(list).first?.offset ?? -1
                    return offset >= 0 ? offset : nil
                }
            }
        }
    }

    /// The start and end offset of `tp` as the broker reports them (ListOffsets). Only a
    /// report: Tansu gives the base offset of the last record batch + 1 as the end, so
    /// messages can exist at and past it (see `KafkaPartitionScan`).
    public func reportedRange(_ tp: KafkaTopicPartition, timeout: Duration = .seconds(10)) async throws -> (start: Int64, end: Int64) {
        try await thread.run { [handle] in
            try handle.withHandle { rk in
                var low: Int64 = 0, high: Int64 = 0
                let err = rd_kafka_query_watermark_offsets(rk, tp.topic, tp.partition, &low, &high, timeout.kafkaMilliseconds)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "watermarks of \(tp)") }
                return (low, high)
            }
        }
    }

    /// The message at exactly `offset` of `tp`. Throws `_PARTITION_EOF` if the partition
    /// ends before it, `OFFSET_OUT_OF_RANGE` if it is gone or not written yet, and
    /// `_TIMED_OUT` if nothing arrived within `timeout`.
    public func read(_ tp: KafkaTopicPartition, offset: Int64, timeout: Duration = .seconds(30)) async throws -> KafkaMessage {
        try await thread.run { [handle] in
            try handle.withHandle { rk in
                let assign = KafkaPartitionList.with([tp], offsets: [offset]) { rd_kafka_assign(rk, $0) }
                guard assign == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(assign, "assign \(tp)@\(offset)") }
                defer { _ = rd_kafka_assign(rk, nil) }
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline {
                    guard let message = rd_kafka_consumer_poll(rk, 200) else { continue }
                    defer { rd_kafka_message_destroy(message) }
                    let err = message.pointee.err
                    if err == RD_KAFKA_RESP_ERR_NO_ERROR {
                        let copy = KafkaMessage(copying: message)
                        guard copy.offset == offset else {
                            throw KafkaError.rdKafka(
                                RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE,
                                "\(tp) has no message at offset \(offset) (the next one is at \(copy.offset))")
                        }
                        return copy
                    }
                    let text = rd_kafka_message_errstr(message).map { String(cString: $0) } ?? ""
                    throw KafkaError.rdKafka(err, "reading \(tp)@\(offset): \(text)")
                }
                throw KafkaError.rdKafka(RD_KAFKA_RESP_ERR__TIMED_OUT, "no message from \(tp)@\(offset) within \(timeout)")
            }
        }
    }

    /// Commits `offset` (the next offset the group will consume) for `tp`, synchronously.
    /// A broker refuses this (`UNKNOWN_MEMBER_ID`, `ILLEGAL_GENERATION`,
    /// `REBALANCE_IN_PROGRESS`) while the group has members; librdkafka's mock cluster
    /// refuses it for any group that ever had members.
    public func commit(_ tp: KafkaTopicPartition, offset: Int64) async throws {
        try await thread.run { [handle] in
            try handle.withHandle { rk in
                try KafkaPartitionList.with([tp], offsets: [offset]) { list in
                    let err = rd_kafka_commit(rk, list, 0)
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "commit \(tp)@\(offset)") }
                    if let (_, partitionError) = KafkaPartitionList.firstError(list) {
                        throw KafkaError.rdKafka(partitionError, "commit \(tp)@\(offset)")
                    }
                }
            }
        }
    }

    /// The group's state and member count as the coordinator reports them, or nil
    /// when the cluster cannot tell (librdkafka's mock cluster has no ListGroups).
    public func groupMembers(timeout: Duration = .seconds(10)) async throws -> (state: String, members: Int)? {
        try await thread.run { [handle, groupID] in
            try handle.withHandle { rk in
                var groups: UnsafePointer<rd_kafka_group_list>?
                let err = rd_kafka_list_groups(rk, groupID, &groups, timeout.kafkaMilliseconds)
                defer { if let groups { rd_kafka_group_list_destroy(groups) } }
                if err == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE { return nil }
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "describe group \(groupID)") }
                guard let groups, groups.pointee.group_cnt > 0, let info = groups.pointee.groups else { return ("Dead", 0) }
                let state = info.pointee.state.map { String(cString: $0) } ?? ""
                return (state, Int(info.pointee.member_cnt))
            }
        }
    }

    /// Closes the client (it holds no group membership, so this is quick).
    public func close() async {
        _ = try? await thread.run { [handle] in
            _ = try? handle.withHandle { rk in rd_kafka_consumer_close(rk) }
            handle.destroy { rd_kafka_destroy($0) }
        }
        thread.stop()
    }

    deinit {
        thread.stop()
        handle.destroy { rd_kafka_destroy_flags($0, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE) }
    }
}
