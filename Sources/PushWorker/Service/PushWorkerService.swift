import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushProviders
import ServiceLifecycle

/// A PushFleet worker: one consumer per lane, each in its own consumer group
/// (the interactive lane in `kafka.group_id`, the bulk lane in
/// `<group>.bulk`), polling into one batch pipeline that delivers, produces
/// retries, parked messages and dead letters, and writes outcomes to
/// PostgreSQL; only then are a batch's offsets stored. Stops on graceful
/// shutdown: no new polls, in-flight batches drained (bounded), offsets
/// committed, consumers closed.
public final class PushWorkerService: Service, Sendable {
    let configuration: WorkerConfiguration
    let logger: Logger
    public let topics: TopicNames
    private let stopping = Locked(false)
    let counters = Locked(WorkerCounters())
    let batchFailure = Locked<(any Error)?>(nil)
    let observer: any WorkerObserver
    /// Liveness/readiness inputs for `/health/*` (nil: not served).
    let health: HealthState?
    private let activeConsumers = Locked<[Lane: KafkaConsumer]>([:])
    private let activeRouter = Locked<ProviderRouter?>(nil)
    /// Partitions each lane's consumer owns now.
    let assigned = Locked<[Lane: Set<KafkaTopicPartition>]>([:])

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

    /// Lag of each assigned partition of both lanes (high watermark −
    /// position) from librdkafka's cached values: non-blocking, for
    /// `pushfleet_consumer_lag`. Empty before the consumers exist and after they closed.
    public func consumerLag() -> [KafkaPartitionLag] {
        activeConsumers.withLock { $0 }.values.flatMap { (try? $0.lag()) ?? [] }
    }

    /// Cumulative counters of every provider client (one per app × provider),
    /// for `pushfleet_token_refreshes_total`, `pushfleet_circuit_state`, ….
    public func providerStats() -> [(provider: Provider, app: String, host: String, stats: ProviderClientStats)] {
        activeRouter.withLock { $0?.allStats() } ?? []
    }

    public func run() async throws {
        let pool = PostgresPool(url: configuration.database.url, size: configuration.database.poolSize, logger: logger)
        let router: ProviderRouter
        let producer: KafkaProducer
        var consumers: [Lane: KafkaConsumer] = [:]
        do {
            router = try ProviderRouter(configuration: configuration, logger: logger)
            do {
                producer = try KafkaProducer(bootstrapServers: configuration.kafka.bootstrapServers,
                                             properties: configuration.kafka.properties, logger: logger)
                for lane in Lane.allCases {
                    consumers[lane] = try KafkaConsumer(
                        bootstrapServers: configuration.kafka.bootstrapServers, groupID: configuration.kafka.groupID(for: lane),
                        topics: topics.consumed(by: lane), properties: configuration.kafka.properties, logger: logger)
                }
            } catch {
                for consumer in consumers.values { await consumer.close(timeout: .seconds(5)) }
                router.shutdown()
                throw error
            }
        } catch {
            await pool.close()
            throw error
        }
        activeConsumers.withLock { $0 = consumers }
        activeRouter.withLock { $0 = router }
        let permits = DeliveryPermits(capacity: configuration.worker.maxDeliveriesInFlight,
                                      bulkFloor: configuration.worker.bulkFloor,
                                      interactiveReserve: configuration.worker.interactiveReserve)
        let stores = WorkerStores(pool: pool, logger: logger, observer: observer, workerID: configuration.worker.id,
                                  registry: configuration.registry)
        let campaigns = CampaignStops()
        let pipeline = BatchPipeline(
            stores: stores, router: router, producer: producer, permits: permits, topics: topics,
            retryPolicy: configuration.retry.policy, maxConcurrentSends: 1024, counters: counters, observer: observer,
            logger: logger, intake: configuration.intake, registry: configuration.registry, campaigns: campaigns)
        let lanes = Lane.allCases.compactMap { lane in
            consumers[lane].map { LaneContext(lane: lane, consumer: $0, pipeline: pipeline, router: router, permits: permits) }
        }
        for context in lanes { installRebalanceHandler(context) }
        let quotas = startQuotaShares(router: router, lanes: lanes)
        let probe = startProbe(pool: pool, ledger: stores.ledger, router: router)

        logger.info("worker started", metadata: [
            "worker.id": "\(configuration.worker.id)",
            "kafka.topics": "\(Lane.allCases.map { "\($0.rawValue): \(topics.consumed(by: $0))" })",
            "kafka.group": "\(configuration.kafka.groupID)",
        ])
        var loopError: (any Error)?
        do {
            try await withGracefulShutdownHandler {
                // The cancelled campaigns first: no batch may send to one.
                guard await self.loadCampaignStops(campaigns, pool) else { return }
                let watch = self.startCampaignWatch(campaigns, pool)
                defer { watch.cancel() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for context in lanes { group.addTask { try await self.consume(context) } }
                    try await group.waitForAll()
                }
            } onGracefulShutdown: {
                self.health?.markStopping()
                self.stopping.withLock { $0 = true }
            }
        } catch {
            loopError = error
            logger.error("worker loop failed", metadata: ["error": "\(error)"])
        }
        quotas.cancel()
        for context in lanes { await finalCommit(context.consumer) }
        probe.cancel()
        activeConsumers.withLock { $0 = [:] }
        activeRouter.withLock { $0 = nil }
        for context in lanes { await context.consumer.close(timeout: .seconds(10)) }
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

    /// One lane's consumer and what its poll loop and batch tasks work with.
    struct LaneContext: Sendable {
        let lane: Lane
        let consumer: KafkaConsumer
        /// The lane's offsets in flight (each consumer has its own partitions).
        let book = OffsetBook()
        /// Takes each polled batch to its written outcome.
        let pipeline: BatchPipeline
        /// Asked when a parked message's provider can take it again.
        let router: ProviderRouter
        /// The bound on deliveries in flight, shared by the lanes.
        let permits: DeliveryPermits
        /// Fired by every finished batch; the poll loop waits on it at the in-flight bound.
        let completions = BatchCompletionSignal()
        /// Bytes of the messages dispatched to batches and not yet finished.
        let bytes = Locked(0)
        /// Partitions revoked or lost since the loop last looked.
        let revoked = Locked<[KafkaTopicPartition]>([])
    }

    var isStopping: Bool { stopping.withLock { $0 } }
}
