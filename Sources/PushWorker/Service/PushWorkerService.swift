import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushProviders
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
    let batchFailure = Locked<(any Error)?>(nil)
    let observer: any WorkerObserver
    /// Liveness/readiness inputs for `/health/*` (nil: not served).
    let health: HealthState?
    private let activeConsumer = Locked<KafkaConsumer?>(nil)
    private let activeRouter = Locked<ProviderRouter?>(nil)

    /// - Parameters:
    ///   - observer: told about latencies (histograms); counters are in `stats`.
    ///   - health: fed with poll-loop heartbeats, assigned partitions and PostgreSQL reachability.
    public init(configuration: WorkerConfiguration, logger: Logger, observer: (any WorkerObserver)? = nil,
                health: HealthState? = nil) {
        self.configuration = configuration
        self.observer = observer ?? NoWorkerObserver()
        self.health = health
        self.logger = logger
        self.topics = configuration.topics
    }

    /// Totals since start (for logs, tests and metrics).
    public var stats: WorkerCounters { counters.withLock { $0 } }

    /// Lag of each assigned partition (high watermark − position) from
    /// librdkafka's cached values: non-blocking, for `pushfleet_consumer_lag`.
    /// Empty before the consumer exists and after it closed.
    public func consumerLag() -> [KafkaPartitionLag] {
        guard let consumer = activeConsumer.withLock({ $0 }) else { return [] }
        return (try? consumer.lag()) ?? []
    }

    /// Cumulative counters of every provider client (one per app × provider),
    /// for `pushfleet_token_refreshes_total`, `pushfleet_circuit_state`, ….
    public func providerStats() -> [(provider: Provider, app: String, host: String, stats: ProviderClientStats)] {
        activeRouter.withLock { $0?.allStats() } ?? []
    }

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
        activeConsumer.withLock { $0 = consumer }
        activeRouter.withLock { $0 = router }
        let probe = startPostgresProbe(pool)
        let book = OffsetBook()
        let revoked = Locked<[KafkaTopicPartition]>([])
        installRebalanceHandler(consumer: consumer, book: book, revoked: revoked)
        let permits = DeliveryPermits(capacity: configuration.worker.maxDeliveriesInFlight)
        let stores = WorkerStores(pool: pool, logger: logger, observer: observer, workerID: configuration.worker.id,
                                  registryCacheTTL: configuration.registry.cacheTTL)
        let pipeline = BatchPipeline(
            stores: stores, router: router, producer: producer, permits: permits, topics: topics,
            retryPolicy: configuration.retry.policy, maxConcurrentSends: 1024, counters: counters, observer: observer,
            logger: logger, intake: configuration.intake, registry: configuration.registry)
        let context = BatchContext(consumer: consumer, book: book, pipeline: pipeline, router: router, permits: permits)

        logger.info("worker started", metadata: [
            "worker.id": "\(configuration.worker.id)", "kafka.topics": "\(topics.consumed)",
            "kafka.group": "\(configuration.kafka.groupID)",
        ])
        var loopError: (any Error)?
        do {
            try await withGracefulShutdownHandler {
                try await self.consume(context, revoked: revoked)
            } onGracefulShutdown: {
                self.health?.markStopping()
                self.stopping.withLock { $0 = true }
            }
        } catch {
            loopError = error
            logger.error("worker loop failed", metadata: ["error": "\(error)"])
        }
        await finalCommit(consumer)
        probe.cancel()
        activeConsumer.withLock { $0 = nil }
        activeRouter.withLock { $0 = nil }
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

    /// What the poll loop and its batch tasks work with.
    struct BatchContext: Sendable {
        var consumer: KafkaConsumer
        var book: OffsetBook
        /// Takes each polled batch to its written outcome.
        var pipeline: BatchPipeline
        /// Asked whether a provider circuit is open (intake pauses while one is).
        var router: ProviderRouter
        /// Fired by every finished batch; the poll loop waits on it at the in-flight bound.
        var completions = BatchCompletionSignal()
        /// The bound on deliveries in flight, over all batches.
        var permits: DeliveryPermits
        /// Bytes of the messages dispatched to batches and not yet finished.
        var bytes = Locked(0)
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
                let count = book.inFlightByPartition().count
                self.counters.withLock { $0.partitionsAssigned = count }
                self.health?.setPartitionsAssigned(count)
                logger.info("partitions assigned", metadata: ["kafka.partitions": "\(partitions.map(\.description))"])
            case .revoked(let partitions):
                let deadline = ContinuousClock.now + drainLimit
                while book.dispatchedInFlight(partitions) > 0, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                let left = book.dispatchedInFlight(partitions)
                book.revoke(partitions)
                revoked.withLock { $0 += partitions }
                let count = book.inFlightByPartition().count
                self.counters.withLock { $0.partitionsAssigned = count }
                self.health?.setPartitionsAssigned(count)
                logger.info("partitions revoked", metadata: [
                    "kafka.partitions": "\(partitions.map(\.description))", "worker.undrained": "\(left)",
                ])
            case .lost(let partitions):
                book.revoke(partitions)
                revoked.withLock { $0 += partitions }
                let count = book.inFlightByPartition().count
                self.counters.withLock { $0.partitionsAssigned = count }
                self.health?.setPartitionsAssigned(count)
                logger.warning("partitions lost", metadata: ["kafka.partitions": "\(partitions.map(\.description))"])
            }
        }
    }

    var isStopping: Bool { stopping.withLock { $0 } }

    /// Readiness needs PostgreSQL: `SELECT 1` now and every 5 s while the worker runs.
    private func startPostgresProbe(_ pool: PostgresPool) -> Task<Void, Never> {
        guard let health else { return Task {} }
        let logger = self.logger
        return Task {
            var last: Bool?
            while !Task.isCancelled {
                let reachable: Bool
                do {
                    _ = try await pool.withConnection { try await $0.query("SELECT 1") }
                    reachable = true
                } catch {
                    reachable = false
                    if last != false {
                        logger.warning("PostgreSQL unreachable; not ready", metadata: ["error": "\(error)"])
                    }
                }
                health.setPostgresReachable(reachable)
                last = reachable
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }
}
