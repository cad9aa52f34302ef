import Foundation
import Logging
import Metrics
import PushCore
import PushKafka
import PushPostgres
import ServiceLifecycle

/// Consumes device receipts from `PREFIX.receipts` in its own consumer group
/// (`<group>.receipts`) and applies them to the delivery ledger.
///
/// Per polled batch: decode and validate every message, apply the valid ones
/// in one PostgreSQL transaction (retried until it commits or the service
/// stops), send malformed ones to `PREFIX.dlq` with the reason in the
/// `pushfleet-dlq-reason` header, and only then store the batch's offsets.
/// Stops on graceful shutdown: the current batch finishes, offsets are committed.
public final class ReceiptConsumerService: Service, Sendable {
    /// Where and how to consume.
    public struct Configuration: Sendable {
        public var bootstrapServers: String
        public var groupID: String
        public var topicPrefix: String
        public var kafkaProperties: [String: String]
        public var databaseURL: String
        public var poolSize = 2
        public var batchSize = 500

        public init(bootstrapServers: String, groupID: String, topicPrefix: String,
                    kafkaProperties: [String: String] = [:], databaseURL: String) {
            self.bootstrapServers = bootstrapServers
            self.groupID = groupID
            self.topicPrefix = topicPrefix
            self.kafkaProperties = kafkaProperties
            self.databaseURL = databaseURL
        }

        /// The worker's Kafka and database settings, group `<group>.receipts`.
        public init(worker: WorkerConfiguration) {
            self.init(bootstrapServers: worker.kafka.bootstrapServers, groupID: worker.kafka.groupID + ".receipts",
                      topicPrefix: worker.kafka.topicPrefix, kafkaProperties: worker.kafka.properties,
                      databaseURL: worker.database.url)
        }

        public var receiptsTopic: String { TopicNames(prefix: topicPrefix).receipts }
        public var deadLetterTopic: String { TopicNames(prefix: topicPrefix).deadLetter }
    }

    /// Totals since start.
    public struct Counts: Sendable, Equatable {
        public var applied = 0
        public var deadLettered = 0
        public var batches = 0
    }

    let configuration: Configuration
    let logger: Logger
    private let stopping = Locked(false)
    private let totals = Locked(Counts())
    private let receiptCounters: [Receipt.Kind: Counter]
    let invalidReceiptCounter: Counter

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "kafka.topic"] = "\(configuration.receiptsTopic)"
        self.logger = logger
        var counters: [Receipt.Kind: Counter] = [:]
        for kind in Receipt.Kind.allCases {
            counters[kind] = Counter(label: "pushfleet_receipts_total", dimensions: [("kind", kind.rawValue)])
        }
        receiptCounters = counters
        invalidReceiptCounter = Counter(label: "pushfleet_receipts_total", dimensions: [("kind", "invalid")])
    }

    /// Totals since start (for logs and tests).
    public var counts: Counts { totals.withLock { $0 } }

    public func run() async throws {
        let pool = PostgresPool(url: configuration.databaseURL, size: configuration.poolSize, logger: logger)
        let consumer: KafkaConsumer
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(bootstrapServers: configuration.bootstrapServers,
                                         properties: configuration.kafkaProperties, logger: logger)
            consumer = try KafkaConsumer(
                bootstrapServers: configuration.bootstrapServers, groupID: configuration.groupID,
                topics: [configuration.receiptsTopic], properties: configuration.kafkaProperties, logger: logger)
        } catch {
            await pool.close()
            throw error
        }
        logger.info("receipt consumer started", metadata: ["kafka.group": "\(configuration.groupID)"])
        var failure: (any Error)?
        do {
            try await withGracefulShutdownHandler {
                try await self.consume(consumer: consumer, producer: producer, store: ReceiptStore(pool: pool))
            } onGracefulShutdown: {
                self.stopping.withLock { $0 = true }
            }
        } catch {
            failure = error
            logger.error("receipt consumer failed", metadata: ["error": "\(error)"])
        }
        do { try await consumer.commit() } catch {
            logger.warning("final receipt offset commit failed; receipts are re-applied (idempotently) after restart",
                           metadata: ["error": "\(error)"])
        }
        await consumer.close(timeout: .seconds(10))
        await producer.close(timeout: .seconds(10))
        await pool.close()
        let t = counts
        logger.info("receipt consumer stopped", metadata: [
            "receipts.applied": "\(t.applied)", "receipts.dead_lettered": "\(t.deadLettered)", "receipts.batches": "\(t.batches)",
        ])
        if let failure { throw failure }
    }

    var isStopping: Bool { stopping.withLock { $0 } }

    func receiptCounter(_ kind: Receipt.Kind) -> Counter {
        receiptCounters[kind] ?? invalidReceiptCounter
    }

    func updateTotals(applied: Int, deadLettered: Int) {
        totals.withLock {
            $0.applied += applied
            $0.deadLettered += deadLettered
            $0.batches += 1
        }
    }

    private func consume(consumer: KafkaConsumer, producer: KafkaProducer, store: ReceiptStore) async throws {
        while !isStopping, !Task.isCancelled {
            let messages = try await consumer.poll(maxMessages: configuration.batchSize, timeout: .milliseconds(200))
            guard !messages.isEmpty else { continue }
            guard try await handle(messages, producer: producer, store: store) else { return }
            var next: [KafkaTopicPartition: Int64] = [:]
            for m in messages { next[m.topicPartition] = max(next[m.topicPartition] ?? 0, m.offset + 1) }
            do {
                try consumer.storeOffsets(next)
            } catch {
                // A partition revoked meanwhile: its next owner re-applies the batch, harmlessly.
                logger.warning("could not store receipt offsets", metadata: ["error": "\(error)"])
            }
        }
    }
}
