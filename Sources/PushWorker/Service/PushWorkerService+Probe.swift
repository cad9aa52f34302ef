import Foundation
import PushCore
import PushPostgres

extension PushWorkerService {
    /// Every 5 s while the worker runs: whether PostgreSQL answers (readiness
    /// needs it), the ledger's unfinished backlog (the metrics and the health
    /// JSON show what waits on retry tiers and parked topics, which consumer
    /// lag does not), each lane's lag and each provider client's state (the
    /// health JSON's provider section). The backlog's query is the
    /// reachability check (one round trip); when it fails, `SELECT 1` tells
    /// an unreachable database from one without the ledger's tables.
    func startProbe(pool: PostgresPool, ledger: LedgerStore, router: ProviderRouter) -> Task<Void, Never> {
        let logger = self.logger
        return Task {
            var last: Bool?
            while !Task.isCancelled {
                var details = HealthDetails()
                do {
                    let backlog = try await ledger.unfinished()
                    details.unfinished = backlog.byStatus
                    details.oldestUnfinishedSeconds = backlog.oldest.map { max(0, Date().timeIntervalSince($0)) }
                    counters.withLock {
                        $0.unfinishedByStatus = backlog.byStatus
                        $0.oldestUnfinishedSeconds = details.oldestUnfinishedSeconds
                    }
                    health?.setPostgresReachable(true)
                    last = true
                } catch {
                    let reachable = (try? await pool.withConnection { try await $0.query("SELECT 1") }) != nil
                    if last != reachable {
                        if reachable {
                            logger.warning("the ledger's backlog cannot be read", metadata: ["error": "\(error)"])
                        } else {
                            logger.warning("PostgreSQL unreachable; not ready", metadata: ["error": "\(error)"])
                        }
                    }
                    health?.setPostgresReachable(reachable)
                    last = reachable
                }
                if let health {
                    for entry in consumerLag() {
                        if let lane = topics.lane(of: entry.partition.topic) { details.laneLag[lane, default: 0] += entry.messages }
                    }
                    let now = Date()
                    details.providers = router.allStats().map { client in
                        HealthDetails.Provider(
                            provider: client.provider, app: client.app, host: client.host,
                            circuit: Self.circuitName(client.stats.circuitState),
                            lastSuccessSecondsAgo: client.stats.lastSuccessAt.map { max(0, now.timeIntervalSince($0)) },
                            errorShare: client.stats.recentRequests > 0
                                ? Double(client.stats.recentFailures) / Double(client.stats.recentRequests) : nil)
                    }
                    health.setDetails(details)
                }
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }

    static func circuitName(_ state: CircuitBreaker.State) -> String {
        switch state {
        case .closed: "closed"
        case .halfOpen: "half_open"
        case .open: "open"
        }
    }
}
