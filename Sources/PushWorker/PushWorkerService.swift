import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import ServiceLifecycle

/// A PushFleet worker: consumes the intake and retry topics in the consumer
/// group, delivers, produces retries and dead letters, writes outcomes to
/// PostgreSQL and only then stores offsets. Stops on graceful shutdown: no
/// new polls, in-flight batches drained (bounded), offsets committed,
/// consumer closed.
public final class PushWorkerService: Service, Sendable {
    let configuration: WorkerConfiguration
    let logger: Logger
    let topics: TopicNames
    private let stopping = Locked(false)
    let counters = Locked(WorkerCounters())
    private let batchFailure = Locked<(any Error)?>(nil)

    public init(configuration: WorkerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.topics = TopicNames(prefix: configuration.kafka.topicPrefix, tiers: configuration.retry.tiers)
    }

    /// Totals since start (for logs and tests).
    public var stats: WorkerCounters { counters.withLock { $0 } }

    public func run() async throws {
        let pool = PostgresPool(url: configuration.database.url, size: configuration.database.poolSize, logger: logger)
        let router: ProviderRouter
        let consumer: KafkaConsumer
        let producer: KafkaProducer
        do {
            router = try ProviderRouter(configuration: configuration, logger: logger)
            do {
                producer = try KafkaProducer(bootstrapServers: configuration.kafka.bootstrapServers,
                                             properties: configuration.kafka.properties, logger: logger)
                consumer = try KafkaConsumer(
                    bootstrapServers: configuration.kafka.bootstrapServers, groupID: configuration.kafka.groupID,
                    topics: topics.consumed, properties: configuration.kafka.properties, logger: logger)
            } catch {
                router.shutdown()
                throw error
            }
        } catch {
            await pool.close()
            throw error
        }
        let book = OffsetBook()
        let revoked = Locked<[KafkaTopicPartition]>([])
        installRebalanceHandler(consumer: consumer, book: book, revoked: revoked)
        let processor = BatchProcessor(
            router: router, store: OutcomeStore(pool: pool, logger: logger), topics: topics,
            retryPolicy: configuration.retry.policy, maxInlineAttempts: configuration.worker.maxInlineAttempts,
            maxConcurrentSends: 1024, logger: logger)
        let context = BatchContext(consumer: consumer, producer: producer, book: book, processor: processor)

        logger.info("worker started", metadata: [
            "worker.id": "\(configuration.worker.id)", "kafka.topics": "\(topics.consumed)",
            "kafka.group": "\(configuration.kafka.groupID)",
        ])
        var loopError: (any Error)?
        do {
            try await withGracefulShutdownHandler {
                try await self.consume(context, revoked: revoked)
            } onGracefulShutdown: {
                self.stopping.withLock { $0 = true }
            }
        } catch {
            loopError = error
            logger.error("worker loop failed", metadata: ["error": "\(error)"])
        }
        do { try await consumer.commit() } catch {
            logger.warning("final offset commit failed; the next owner resumes from the last committed offset and the ledger suppresses re-sends",
                           metadata: ["error": "\(error)"])
        }
        await consumer.close(timeout: .seconds(10))
        await producer.close(timeout: .seconds(10))
        router.shutdown()
        await pool.close()
        let totals = stats
        logger.info("worker stopped", metadata: [
            "worker.batches": "\(totals.batches)", "worker.messages": "\(totals.messages)",
            "worker.deliveries": "\(totals.deliveries)", "worker.suppressed": "\(totals.suppressed)",
            "worker.rejected_messages": "\(totals.rejectedMessages)", "worker.produced": "\(totals.produced)",
        ])
        if let loopError { throw loopError }
    }

    /// What a batch task needs.
    struct BatchContext: Sendable {
        var consumer: KafkaConsumer
        var producer: KafkaProducer
        var book: OffsetBook
        var processor: BatchProcessor
    }

    /// Assigned partitions get fresh trackers; revoked ones are drained
    /// (bounded) so their finished work is stored and committed before they
    /// move; lost ones are dropped with nothing stored.
    private func installRebalanceHandler(consumer: KafkaConsumer, book: OffsetBook, revoked: Locked<[KafkaTopicPartition]>) {
        let logger = self.logger
        let drainLimit = configuration.worker.revokeDrainTimeout
        consumer.setRebalanceHandler { event in
            switch event {
            case .assigned(let partitions):
                book.assign(partitions)
                // A partition we paused while holding retries, lost, and now back: resume it
                // (only partitions librdkafka reports paused, so nothing rewinds).
                let stillPaused = partitions.filter { consumer.pausedPartitions.contains($0) }
                if !stillPaused.isEmpty { try? consumer.resume(stillPaused) }
                logger.info("partitions assigned", metadata: ["kafka.partitions": "\(partitions.map(\.description))"])
            case .revoked(let partitions):
                let deadline = ContinuousClock.now + drainLimit
                while book.dispatchedInFlight(partitions) > 0, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                let left = book.dispatchedInFlight(partitions)
                book.revoke(partitions)
                revoked.withLock { $0 += partitions }
                logger.info("partitions revoked", metadata: [
                    "kafka.partitions": "\(partitions.map(\.description))", "worker.undrained": "\(left)",
                ])
            case .lost(let partitions):
                book.revoke(partitions)
                revoked.withLock { $0 += partitions }
                logger.warning("partitions lost", metadata: ["kafka.partitions": "\(partitions.map(\.description))"])
            }
        }
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func consume(_ context: BatchContext, revoked: Locked<[KafkaTopicPartition]>) async throws {
        let maxBatches = configuration.worker.maxBatchesInFlight
        let batchSize = configuration.worker.batchSize
        var delayed = DelayedPartitions()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            func dispatch(_ messages: [KafkaMessage]) {
                guard !messages.isEmpty else { return }
                let ticket = context.book.dispatch(messages)
                inFlight += 1
                group.addTask {
                    do {
                        try await self.handle(messages, ticket: ticket, context)
                    } catch {
                        // Stop taking new work at once: this batch's offsets stay unstored.
                        self.batchFailure.withLock { $0 = $0 ?? error }
                        throw error
                    }
                }
            }
            while !isStopping {
                if let failure = batchFailure.withLock({ $0 }) { throw failure }
                if inFlight >= maxBatches {
                    try await group.next()
                    inFlight -= 1
                    continue
                }
                let polled = try await context.consumer.poll(maxMessages: batchSize, timeout: .milliseconds(100))
                delayed.drop(revoked.withLock { r in defer { r = [] }; return r })
                let now = Date()
                for tp in delayed.due(at: now, releaseInto: { dispatch($0) }) {
                    try? context.consumer.resume([tp])
                }
                if polled.isEmpty { continue }
                let accepted = context.book.begin(polled)
                var ready: [KafkaMessage] = []
                for message in accepted {
                    let due = topics.isRetryTopic(message.topic) ? RetryHeaders(message: message).dueAt : nil
                    if delayed.hold(message, dueAt: due, now: now) {
                        if delayed.justPaused(message.topicPartition) {
                            try? context.consumer.pause([message.topicPartition])
                        }
                    } else {
                        ready.append(message)
                    }
                }
                dispatch(ready)
            }
            try await drain(&group, inFlight: inFlight)
        }
    }

    /// Bounded wait for the batches already taken.
    private func drain(_ group: inout ThrowingTaskGroup<Void, any Error>, inFlight: Int) async throws {
        var inFlight = inFlight
        let deadline = ContinuousClock.now + configuration.worker.drainTimeout
        group.addTask {
            try await Task.sleep(until: deadline)
            throw DrainTimeout()
        }
        do {
            while inFlight > 0 {
                try await group.next()
                inFlight -= 1
            }
            group.cancelAll()
        } catch is DrainTimeout {
            logger.warning("drain timed out; unfinished batches are left uncommitted and will be redelivered",
                           metadata: ["worker.batches_in_flight": "\(inFlight)"])
            group.cancelAll()
        }
    }

    private struct DrainTimeout: Error {}
}

/// Worker totals.
public struct WorkerCounters: Sendable {
    public var batches = 0
    public var messages = 0
    public var deliveries = 0
    public var suppressed = 0
    public var rejectedMessages = 0
    public var produced = 0
}
