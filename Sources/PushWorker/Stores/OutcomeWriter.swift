import Foundation
import Logging
import PushCore
import PushPostgres

/// Writes a part's outcome to PostgreSQL: its delivery rows (the ledger), its
/// attempts, the token invalidations and device events it carries, and its
/// intake rejections, in one transaction (one statement for the common part
/// of deliveries and attempts only). Tokens it changes in the registry are
/// dropped from the registry cache it shares with `DeviceRegistry`, so this
/// worker's next look-up sees its own write.
final class OutcomeWriter: Sendable {
    private let pool: PostgresPool
    let logger: Logger
    /// How a write waits out a database outage.
    let outages: OutageRetry
    private let observer: any WorkerObserver
    private let registryCache: TokenRegistryCache
    private let partitions: DailyPartitions

    /// `worker.id`: what `delivery_attempts.worker` records.
    let workerID: String

    init(pool: PostgresPool, registryCache: TokenRegistryCache, logger: Logger, observer: any WorkerObserver = NoWorkerObserver(),
         workerID: String = WorkerConfiguration.Worker().id) {
        self.workerID = workerID
        self.pool = pool
        self.logger = logger
        self.outages = OutageRetry(logger: logger)
        self.observer = observer
        self.registryCache = registryCache
        self.partitions = DailyPartitions(pool: pool, logger: logger)
    }

    static let finalStatuses = DeliveryStatus.allCases.filter(\.isFinal).map { "'\($0.rawValue)'" }.joined(separator: ",")

    /// Writes one batch's outcomes in one transaction; returns the delivery
    /// rows as written (one per key, see `collapse`).
    @discardableResult
    func write(_ outcome: BatchOutcome) async throws -> [DeliveryRecord] {
        let deliveries = Self.collapse(outcome.deliveries)
        await partitions.ensure(Set(deliveries.map { PartitionDay(containing: $0.key.createdAt) }))
        let started = ContinuousClock.now
        if outcome.deviceUpdates.isEmpty, outcome.invalidations.isEmpty, outcome.rejections.isEmpty {
            // The common batch: deliveries and attempts in one statement (one round
            // trip, atomic on its own) instead of BEGIN, two inserts and COMMIT.
            if !deliveries.isEmpty || !outcome.attempts.isEmpty {
                let deliveryBinds = Self.deliveryBinds(deliveries), idBinds = Self.notificationIDBinds(deliveries)
                // A campaign's batches are all new ids: plain inserts, with first tries that
                // ended their delivery kept on its row (0012); the upsert, every attempt
                // logged, only if a row turned up since the lookup (a previous owner's write).
                let fresh = !deliveries.isEmpty && deliveries.allSatisfy { outcome.idsNewToLedger.contains($0.key.notificationID) }
                _ = try await pool.withConnection { connection in
                    if fresh {
                        do {
                            let (latencies, logged) = Self.foldFirstAttempts(deliveries: deliveries, attempts: outcome.attempts)
                            return try await connection.query(
                                prepared: Self.freshFoldedDeliveriesAndAttemptsSQL,
                                deliveryBinds + [.doubleArray(latencies)] + Self.attemptBinds(logged, worker: workerID) + idBinds)
                        } catch let error as PostgresError where error.sqlState == "23505" {
                            logger.info("ledger rows appeared since the batch's lookup; written with the upsert",
                                        metadata: ["postgres.detail": "\(error.detail ?? error.message)"])
                        }
                    }
                    return try await connection.query(
                        prepared: Self.deliveriesAndAttemptsSQL,
                        deliveryBinds + Self.attemptBinds(outcome.attempts, worker: workerID) + idBinds)
                }
            }
            observer.batchCommitted(seconds: (ContinuousClock.now - started).seconds)
            return deliveries
        }
        try await pool.withConnection { connection in
            try await connection.transaction { tx in
                // Registry first: a registration in this batch is what a 410 below is compared with.
                if !outcome.deviceUpdates.isEmpty { try await Self.applyDeviceEvents(outcome.deviceUpdates, on: tx) }
                if !deliveries.isEmpty {
                    try await tx.query(prepared: Self.upsertDeliveriesSQL, Self.deliveryBinds(deliveries))
                    try await tx.query(prepared: Self.insertNotificationIDsSQL(), Self.notificationIDBinds(deliveries))
                }
                if !outcome.attempts.isEmpty {
                    try await tx.query(prepared: Self.insertAttemptsSQL(), Self.attemptBinds(outcome.attempts, worker: workerID))
                }
                if !outcome.invalidations.isEmpty { try await Self.invalidate(outcome.invalidations, on: tx) }
                if !outcome.rejections.isEmpty { try await IntakeRejectionRows.insert(outcome.rejections, on: tx) }
            }
        }
        // This worker just changed these tokens in the registry: its cached view of them is stale.
        registryCache.forget(outcome.invalidations.map { AppToken(app: $0.app, platform: $0.platform, token: $0.token) })
        registryCache.forget(outcome.deviceUpdates.map { AppToken(app: $0.app, platform: $0.platform, token: $0.token) })
        observer.batchCommitted(seconds: (ContinuousClock.now - started).seconds)
        return deliveries
    }

    /// One row per key (Postgres cannot upsert the same row twice in one
    /// statement); a final status wins over a non-final one.
    static func collapse(_ records: [DeliveryRecord]) -> [DeliveryRecord] {
        var index: [DeliveryKey: Int] = [:]
        index.reserveCapacity(records.count)  // no rehash of every key as it grows
        var out: [DeliveryRecord] = []
        out.reserveCapacity(records.count)
        for record in records {
            if let i = index[record.key] {
                let attempts = out[i].attempts + record.attempts
                if record.status.isFinal || !out[i].status.isFinal { out[i] = record }
                out[i].attempts = attempts
            } else {
                index[record.key] = out.count
                out.append(record)
            }
        }
        return out
    }
}
