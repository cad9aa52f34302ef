import PushCore
import CRdKafka
import Foundation
import Logging

/// High-level group consumer (cooperative-sticky assignment by default, manual offset
/// store, automatic commit of what was stored, synchronous commit on revoke).
///
/// Blocking polls, and the rebalance callbacks they trigger, run on a dedicated thread
/// owned by this object; commits and metadata queries run on a second dedicated thread.
/// Neither ever blocks Swift's cooperative pool.
///
/// Offsets: nothing is committed unless stored with `storeOffset` (the next offset to
/// consume, i.e. last processed + 1). Stored offsets are committed periodically
/// (`auto.commit.interval.ms`), on `commit()`, synchronously before revoked partitions
/// go, and on `close()`.
///
/// Assignor: `cooperative-sticky`. Before librdkafka 2.2.0 (Debian bookworm has 2.0.2) it
/// aborts the process when a consumer that never got an assignment is closed or destroyed
/// (librdkafka#4312): on those versions `close` and `deinit` avoid that (see `close`),
/// on later ones they close and destroy as usual. Every move takes two rebalance rounds
/// (on the mock cluster each lasts `session.timeout.ms` − 1 s, on Tansu half of it and a
/// scale-out takes three; docs/development.md has the times measured). An eager assignor
/// (`roundrobin`) can be configured in `kafka.properties`; it stalled a chaos run here
/// (members evicted during a revoke drain), so it is not the default.
///
/// `@unchecked Sendable` is safe: librdkafka's consumer API is thread-safe, the
/// handle is borrowed under `KafkaHandle`'s lock (so it cannot be destroyed during a
/// call), and the other mutable state is in `Locked` boxes.
public final class KafkaConsumer: @unchecked Sendable {
    let handle: KafkaHandle
    let context: KafkaClientContext
    let logger: Logger
    let pollThread: KafkaBlockingThread
    let controlThread: KafkaBlockingThread
    private let closing = Locked(false)
    /// Whether `close` and `deinit` must not destroy a consumer before its first assignment:
    /// the cooperative-sticky assignor on a librdkafka that aborts then (see `close`).
    let guardsEarlyClose: Bool

    /// Joins `groupID` and subscribes to `topics`. Defaults: `enable.auto.offset.store=false`,
    /// `enable.auto.commit=true`, `partition.assignment.strategy=cooperative-sticky`,
    /// `session.timeout.ms=6000`, `heartbeat.interval.ms=500`, `auto.commit.interval.ms=1000`,
    /// `auto.offset.reset=earliest`,
    /// prefetch at most 8 MiB (`queued.max.messages.kbytes=8192`, `queued.min.messages=10000`);
    /// `properties` override or add any librdkafka key.
    public init(
        bootstrapServers: String, groupID: String, topics: [String], properties: [String: String] = [:],
        logger: Logger
    ) throws {
        var all: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "group.id": groupID,
            "enable.auto.offset.store": "false",
            "enable.auto.commit": "true",
            // Cooperative: a rebalance moves only the partitions that must move (the others
            // keep working). On librdkafka before 2.2.0 `close` avoids its abort for a
            // consumer closed before its first assignment (librdkafka#4312).
            "partition.assignment.strategy": "cooperative-sticky",
            // A member that dies without leaving holds its partitions for the session timeout
            // (librdkafka's default: 45 s), and librdkafka's mock cluster makes every rebalance
            // round wait `session.timeout.ms` - 1 s. 6 s is the smallest session a broker
            // accepts by default (group.min.session.timeout.ms); heartbeats stay well inside it.
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "500",
            // Stored offsets reach the group within a second (librdkafka's default: 5 s). The
            // commit on revoke is refused while the coordinator rebalances (librdkafka's mock
            // cluster refuses it with REBALANCE_IN_PROGRESS when an eager rebalance revokes),
            // and then the next owner replays at most this interval of finished work.
            "auto.commit.interval.ms": "1000",
            "auto.offset.reset": "earliest",
            "client.id": "pushkafka-consumer",
            // Prefetch bounded to 8 MiB (librdkafka's default is 64 MiB): a worker that waits
            // at its in-flight bound keeps what it fetched, and that must not cost the RSS budget.
            "queued.max.messages.kbytes": "8192",
            "queued.min.messages": "10000",
        ]
        let (applicable, dropped) = KafkaPropertyScope.applicable(properties, producer: false)
        if !dropped.isEmpty {
            logger.debug("producer-only kafka properties not passed to the consumer", metadata: ["kafka.properties": "\(dropped)"])
        }
        all.merge(applicable) { _, override in override }
        var logger = logger
        logger[metadataKey: "kafka.group"] = "\(groupID)"
        let conf = try KafkaConf.make(all)
        let context = KafkaClientContext(logger: logger)
        let retained = installCommonCallbacks(on: conf, context: context)
        rd_kafka_conf_set_rebalance_cb(conf) { rk, err, partitions, _ in
            guard let rk else { return }
            KafkaConsumer.rebalance(rk: rk, err: err, partitions: partitions)
        }
        let handle = try KafkaConf.newClient(type: RD_KAFKA_CONSUMER, conf: conf, context: retained)
        do {
            try handle.withHandle { rk in
                // Serve rebalances, errors and logs from the consumer queue we poll.
                let redirect = rd_kafka_poll_set_consumer(rk)
                guard redirect == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(redirect, "poll_set_consumer") }
                let subscription = topics.map { KafkaTopicPartition(topic: $0, partition: -1) }
                let err = KafkaPartitionList.with(subscription) { rd_kafka_subscribe(rk, $0) }
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "subscribe \(topics)") }
            }
        } catch {
            handle.destroy { rd_kafka_destroy_flags($0, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE) }
            throw error
        }
        self.handle = handle
        self.context = context
        self.logger = logger
        guardsEarlyClose = (all["partition.assignment.strategy"] ?? "").contains("cooperative-sticky")
            && KafkaLibrary.abortsOnEarlyCooperativeClose
        pollThread = KafkaBlockingThread(name: "kafka.cons.poll")
        controlThread = KafkaBlockingThread(name: "kafka.cons.ctl")
    }

    /// Up to `maxMessages` messages, waiting at most `timeout` for the first; `[]` on
    /// timeout. Once the first has arrived, waits up to `linger` more for others to
    /// make a fuller batch (`.zero`: only what is already queued), never past
    /// `maxMessages`. Informational per-partition events (`_PARTITION_EOF`,
    /// transient broker errors) are logged, not thrown; a fatal error is thrown.
    /// `maxBytes`: the poll ends once its messages' keys and values reach it
    /// (so it may pass it by one message).
    public func poll(maxMessages: Int, maxBytes: Int = .max, timeout: Duration, linger: Duration = .zero) async throws -> [KafkaMessage] {
        try await pollThread.run { [self] in
            try self.pollBlocking(maxMessages: maxMessages, maxBytes: maxBytes, timeout: timeout, linger: linger)
        }
    }

    private func pollBlocking(maxMessages: Int, maxBytes: Int, timeout: Duration, linger: Duration) throws -> [KafkaMessage] {
        if let fatal = context.fatalError.withLock({ $0 }) { throw KafkaError.fatal(fatal) }
        let deadline = ContinuousClock.now + timeout
        return try handle.withHandle { rk in
            var messages: [KafkaMessage] = []
            messages.reserveCapacity(min(maxMessages, 1024))
            var lingerEnd: ContinuousClock.Instant?
            var names = TopicNameCache()
            var bytes = 0
            while messages.count < maxMessages, bytes < maxBytes {
                // Wait while nothing has arrived, then for the rest of the linger (if any),
                // then take only what is already queued.
                if lingerEnd == nil, !messages.isEmpty { lingerEnd = ContinuousClock.now + linger }
                let wait = lingerEnd.map { max(0, ($0 - ContinuousClock.now).kafkaMilliseconds) }
                    ?? (deadline - ContinuousClock.now).kafkaMilliseconds
                guard let message = rd_kafka_consumer_poll(rk, wait) else {
                    if wait == 0 { break } else { continue }
                }
                defer { rd_kafka_message_destroy(message) }
                let err = message.pointee.err
                if err == RD_KAFKA_RESP_ERR_NO_ERROR {
                    let taken = KafkaMessage(copying: message, names: &names)
                    bytes += taken.byteCount
                    messages.append(taken)
                } else if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                    continue
                } else if err == RD_KAFKA_RESP_ERR__FATAL {
                    throw KafkaError.fatal(context.fatalError.withLock { $0 } ?? "fatal consumer error")
                } else {
                    let text = rd_kafka_message_errstr(message).map { String(cString: $0) } ?? ""
                    logger.warning(
                        "Kafka consumer event: \(text)",
                        metadata: [
                            "kafka.error": "\(String(cString: rd_kafka_err2name(err)))",
                            "kafka.topic": "\(message.pointee.rkt.flatMap { rd_kafka_topic_name($0) }.map { String(cString: $0) } ?? "")",
                            "kafka.partition": "\(message.pointee.partition)",
                        ])
                }
            }
            return messages
        }
    }

    /// Commits stored offsets, leaves the group (revoking partitions through the
    /// rebalance handler) and destroys the consumer. If that does not finish within
    /// `timeout` (librdkafka 2.0.2 can hang here after a lost partition or a broker
    /// restart) it logs and returns anyway, leaving the stuck close behind.
    ///
    /// With the cooperative-sticky assignor on a librdkafka before 2.2.0, a consumer that
    /// never got an assignment first polls (up to half of `timeout`) for it: closing or
    /// destroying it earlier can abort the process there (`rd_kafka_sticky_assignor_state_destroy:
    /// Assertion 'assignor_state' failed`, librdkafka#4312) when the group's join
    /// answer arrives during the close. If none comes, it unsubscribes (leaving the group)
    /// and abandons the handle without destroying it: only for a process about to exit.
    /// A later librdkafka closes at once (`KafkaLibrary.abortsOnEarlyCooperativeClose`).
    public func close(timeout: Duration = .seconds(10)) async {
        guard closing.withLock({ was in defer { was = true }; return !was }) else { return }
        let once = ResumeOnce()
        let completed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            once.install(continuation)
            let queued = pollThread.enqueue { [self] in
                self.closeBlocking(firstAssignmentWait: timeout / 2)
                once.resume(true)
            }
            if !queued { once.resume(true) }
            let millis = Int(timeout.kafkaMilliseconds)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(millis)) { once.resume(false) }
        }
        pollThread.stop()
        controlThread.stop()
        if !completed {
            logger.error(
                "Kafka consumer close did not finish in time; abandoning it",
                metadata: ["kafka.close_timeout": "\(timeout)"])
        }
    }

    private func closeBlocking(firstAssignmentWait: Duration) {
        logger.info("Kafka consumer closing", metadata: [
            "kafka.ever_assigned": "\(context.everAssigned.withLock { $0 })", "kafka.early_close_guard": "\(guardsEarlyClose)",
            "librdkafka.version": "\(KafkaLibrary.version)",
        ])
        if guardsEarlyClose, !awaitFirstAssignment(firstAssignmentWait) {
            _ = try? handle.withHandle { rk in
                _ = rd_kafka_unsubscribe(rk)
                // Let the LeaveGroup go out; nothing polled here is processed.
                let end = ContinuousClock.now + .milliseconds(300)
                while ContinuousClock.now < end {
                    if let message = rd_kafka_consumer_poll(rk, 50) { rd_kafka_message_destroy(message) }
                }
            }
            handle.abandon()
            logger.warning(
                "Kafka consumer stopped before its first assignment; left the group without destroying the client (librdkafka before 2.2.0 would abort)",
                metadata: ["librdkafka.version": "\(KafkaLibrary.version)"])
            return
        }
        _ = try? handle.withHandle { rk in
            let commit = rd_kafka_commit(rk, nil, 0)
            if commit != RD_KAFKA_RESP_ERR_NO_ERROR && commit != RD_KAFKA_RESP_ERR__NO_OFFSET {
                logger.warning("final commit failed", metadata: ["kafka.error": "\(KafkaError.rdKafka(commit))"])
            }
            let err = rd_kafka_consumer_close(rk)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                logger.warning("consumer close reported an error", metadata: ["kafka.error": "\(KafkaError.rdKafka(err))"])
            }
        }
        handle.destroy { rd_kafka_destroy($0) }
        logger.debug("Kafka consumer closed")
    }

    /// Polls (serving the rebalance callback, dropping any message: nothing is stored)
    /// until an assignment has been received, at most `limit`. True once one has.
    private func awaitFirstAssignment(_ limit: Duration) -> Bool {
        if context.everAssigned.withLock({ $0 }) { return true }
        let deadline = ContinuousClock.now + limit
        _ = try? handle.withHandle { rk in
            while !context.everAssigned.withLock({ $0 }), ContinuousClock.now < deadline {
                if let message = rd_kafka_consumer_poll(rk, 100) { rd_kafka_message_destroy(message) }
            }
        }
        return context.everAssigned.withLock { $0 }
    }

    deinit {
        pollThread.stop()
        controlThread.stop()
        // Not closed: leave without the (possibly hanging) close; the group notices by session
        // timeout. Cooperative-sticky before any assignment, on a librdkafka before 2.2.0:
        // destroying would abort the process.
        if guardsEarlyClose, !context.everAssigned.withLock({ $0 }) {
            handle.abandon()
        } else {
            handle.destroy { rd_kafka_destroy_flags($0, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE) }
        }
    }
}

/// Resumes a continuation exactly once, from whichever side finishes first.
///
/// `@unchecked Sendable` is safe: the continuation slot is only touched under `state`'s lock.
final class ResumeOnce: @unchecked Sendable {
    private let state = Locked<(continuation: CheckedContinuation<Bool, Never>?, value: Bool?)>((nil, nil))

    func install(_ continuation: CheckedContinuation<Bool, Never>) {
        let early: Bool? = state.withLock { slot in
            if let value = slot.value { return value }
            slot.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(_ value: Bool) {
        let continuation: CheckedContinuation<Bool, Never>? = state.withLock { slot in
            guard slot.value == nil else { return nil }
            slot.value = value
            defer { slot.continuation = nil }
            return slot.continuation
        }
        continuation?.resume(returning: value)
    }
}
