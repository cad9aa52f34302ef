import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres

/// The one owner of a polled batch, from its messages to its written
/// outcome. For each part of the batch (as many messages as fit the
/// delivery permits' part budget):
///
/// 1. decode, once per message (`IntakeDecoder`), and size the part
///    (`BatchParts`, by least deliveries, then by the users' real device
///    counts from `DeviceRegistry`, planned by `UserFanOut`);
/// 2. take delivery permits for it, and decide it (`+Decide`): resolve user
///    ids to devices, ask the ledger (`LedgerStore`) what is final or waiting
///    on a retry tier, ask the registry about tokens named directly, end a
///    cancelled campaign's deliveries (`CampaignStops`), translate, send and
///    judge (`DeliverySender`), schedule retries and dead letters (`RetryScheduler`);
/// 3. commit it (`+Commit`): produce its retry and dead-letter messages and
///    wait for Kafka's acknowledgement (`OutgoingProducer`), then write its
///    outcome (`OutcomeWriter`), then give its permits back.
///
/// `run` returns once every part is written; the caller then stores the
/// batch's offsets. A worker killed between parts redelivers the batch, and
/// the ledger suppresses what the written parts sent. A class, so each
/// concurrent send captures one reference rather than a copy of every field.
final class BatchPipeline: Sendable {
    let decoder: IntakeDecoder
    let ledger: LedgerStore
    let registry: DeviceRegistry
    let writer: OutcomeWriter
    let router: ProviderRouter
    let sender: DeliverySender
    let retries: RetryScheduler
    /// nil for tools and tests that only look at outcomes (`outcome(of:)`); `run` needs one.
    let producer: OutgoingProducer?
    /// The bound on deliveries in flight over all batches; nil: unbounded (tests, tools).
    let permits: DeliveryPermits?
    let outages: OutageRetry
    let topics: TopicNames
    /// How long an intake copy of a delivery waiting on a retry tier is held back for it.
    let retryOwnership: Duration
    /// How long an intake copy of a parked delivery is held back for it.
    let parkOwnership: Duration
    let counters: Locked<WorkerCounters>
    let logger: Logger
    /// Apps whose notifications go to tokens the registry has as invalid.
    let probingApps: Set<String>
    /// The campaigns cancelled fleet-wide, and their sends' gates.
    let campaigns: CampaignStops

    init(stores: WorkerStores, router: ProviderRouter, producer: KafkaProducer?, permits: DeliveryPermits?,
         topics: TopicNames, retryPolicy: RetryPolicy, maxConcurrentSends: Int, counters: Locked<WorkerCounters>,
         observer: any WorkerObserver, logger: Logger,
         intake: WorkerConfiguration.Intake = .init(), registry: WorkerConfiguration.Registry = .init(),
         campaigns: CampaignStops = CampaignStops()) {
        self.campaigns = campaigns
        decoder = IntakeDecoder(topics: topics, intake: intake, counters: counters, logger: logger)
        ledger = stores.ledger
        self.registry = stores.registry
        writer = stores.writer
        self.router = router
        sender = DeliverySender(topics: topics, maxConcurrentSends: maxConcurrentSends, counters: counters,
                                observer: observer, logger: logger)
        retries = RetryScheduler(topics: topics, retryPolicy: retryPolicy)
        self.producer = producer.map { OutgoingProducer(producer: $0, deadLetterTopic: topics.deadLetter, logger: logger) }
        self.permits = permits
        outages = OutageRetry(logger: logger)
        self.topics = topics
        retryOwnership = retryPolicy.retryOwnership
        parkOwnership = retryPolicy.parkOwnership
        self.counters = counters
        self.logger = logger
        probingApps = registry.probingApps
    }

    /// Handles `messages` to the end, part after part: each part is decided,
    /// then its retries and dead letters are produced and its outcome written
    /// (retrying while Kafka or PostgreSQL is away) before the next takes its
    /// permits. A message or a record that PostgreSQL or Kafka refuses for its
    /// own sake (a data error, a message too large) is isolated from the rest,
    /// recorded as rejected with the error, and the batch goes on: nothing a
    /// producer sends can hold a partition for ever.
    ///
    /// `lane` is the lane of the consumer the batch came from: its parts take
    /// that lane's permits.
    func run(_ messages: [KafkaMessage], lane: Lane = .interactive) async throws {
        let policy = decoder.policy()
        let budget = permits?.partBudget(for: lane) ?? Int.max
        var parts = BatchParts(messages)
        var first = true
        while !parts.isDone {
            let candidates = parts.nextCandidates(budget: budget) { decoder.decode($0, policy: policy) }
            let part = try await decideIsolating(parts.ready.prefix(candidates), counted: parts.counted, handled: parts.handled,
                                                 lane: lane)
            defer { permits?.release(part.permits, lane: lane) }
            try await commit(part, firstOfBatch: first)
            parts.finish(part)
            first = false
        }
    }

    /// The outcome of `messages` as one part, decided but neither produced nor
    /// written, without a delivery bound (tests, tools).
    func outcome(of messages: [KafkaMessage]) async throws -> BatchOutcome {
        let policy = decoder.policy()
        let decoded = messages.map { decoder.decode($0, policy: policy) }
        return try await decidePart(decoded[...], counted: [:], handled: [], permits: nil, lane: .interactive).outcome
    }

    /// `decidePart`, with a part that PostgreSQL refuses with a data error
    /// halved until the message behind it is found and dead-lettered (a part
    /// of one message). Every query of a part runs before its first send, so a
    /// refused part has sent nothing; the messages after a smaller part are
    /// simply the next part.
    private func decideIsolating(_ candidates: ArraySlice<DecodedMessage>, counted: [AppUser: Int],
                                 handled: Set<Int>, lane: Lane) async throws -> DecidedPart {
        do {
            return try await outages.run("process batch") {
                try await self.decidePart(candidates, counted: counted, handled: handled, permits: self.permits, lane: lane)
            }
        } catch let error as PostgresError where error.isDataError {
            guard candidates.count > 1, let first = candidates.first else {
                countPoison(.processing)
                let outcome = candidates.first.map { poisoned($0.message, error) } ?? BatchOutcome()
                return DecidedPart(outcome: outcome, taken: candidates.count, permits: 0)
            }
            logger.warning("batch refused by PostgreSQL; isolating the message behind it", metadata: [
                "kafka.partition": "\(first.message.topicPartition)", "kafka.offset": "\(first.message.offset)",
                "worker.messages": "\(candidates.count)", "error": "\(error)",
            ])
            return try await decideIsolating(candidates.prefix(candidates.count / 2), counted: counted, handled: handled,
                                             lane: lane)
        }
    }

    /// Sizes the part among `candidates` by their users' real device counts
    /// (the prefix whose deliveries fit `lane`'s part budget of `permits`; all
    /// of them without), takes `lane`'s permits for exactly that, and decides
    /// it. Nothing is held when it throws.
    func decidePart(_ candidates: ArraySlice<DecodedMessage>, counted: [AppUser: Int], handled: Set<Int>,
                    permits: DeliveryPermits?, lane: Lane = .interactive) async throws -> DecidedPart {
        guard !candidates.isEmpty else { return DecidedPart(outcome: BatchOutcome(), taken: 0, permits: 0) }
        var counts = counted
        let uncounted = Set(candidates.flatMap(\.users)).filter { counts[$0] == nil }
        if !uncounted.isEmpty {
            let fresh = try await registry.deviceCounts(of: uncounted)
            for user in uncounted { counts[user] = fresh[user] ?? 0 }
        }
        let plan = UserFanOut(candidates.map(\.fanOutEntry), counts: counts)
        var walk = BudgetWalk(budget: permits?.partBudget(for: lane) ?? Int.max)
        for (index, entry) in candidates.enumerated() {
            // A user sent to makes its devices' deliveries; any other user one row.
            let users = plan.planned[index] ?? (0, 0)
            guard walk.take(entry.leastDeliveries - users.users + users.devices) else { break }
        }
        let held = try await permits?.acquire(walk.total, lane: lane) ?? 0
        do {
            let (outcome, keys) = try await decide(candidates.prefix(walk.count), counts: counts, handled: handled)
            return DecidedPart(outcome: outcome, taken: walk.count, permits: held, counted: counts, handled: keys)
        } catch {
            permits?.release(held, lane: lane)
            throw error
        }
    }

    func countPoison(_ stage: PoisonStage) {
        counters.withLock { $0.poisonByStage[stage.rawValue, default: 0] += 1 }
    }
}
