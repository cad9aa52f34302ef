import Foundation
import Logging
import PushPostgres

/// What a batch reads and writes in PostgreSQL, one type per job, over one
/// pool: the ledger (`LedgerStore`), the device registry (`DeviceRegistry`)
/// and the outcome writes (`OutcomeWriter`). The registry and the writer
/// share one registry cache, so a token this worker invalidates or sees
/// registered is looked up afresh at once.
struct WorkerStores: Sendable {
    let ledger: LedgerStore
    let registry: DeviceRegistry
    let writer: OutcomeWriter
    /// The registry cache the registry reads through and the writer drops changed tokens from.
    let registryCache: TokenRegistryCache

    init(pool: PostgresPool, logger: Logger, observer: any WorkerObserver = NoWorkerObserver(),
         workerID: String = WorkerConfiguration.Worker().id,
         registry settings: WorkerConfiguration.Registry = WorkerConfiguration.Registry()) {
        let cache = TokenRegistryCache(ttl: settings.cacheTTL)
        registryCache = cache
        ledger = LedgerStore(pool: pool)
        registry = DeviceRegistry(pool: pool, cache: cache, staleAfter: settings.staleAfter)
        writer = OutcomeWriter(pool: pool, registryCache: cache, logger: logger, observer: observer, workerID: workerID)
    }
}
