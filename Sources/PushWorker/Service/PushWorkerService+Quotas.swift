import Foundation
import PushCore
import PushKafka

extension PushWorkerService {
    /// Keeps this replica's share of every fleet-wide provider quota
    /// (`fleet_rate_limit_per_second`) equal to its share of the lanes'
    /// intake partitions: with the group's assignment as the only
    /// coordination, the replicas' ceilings add up to the quota however many
    /// there are, and follow every rebalance within a fraction of a second.
    /// Nothing to do (no task) when no client has a fleet-wide quota.
    func startQuotaShares(router: ProviderRouter, lanes: [LaneContext]) -> Task<Void, Never> {
        guard router.hasFleetQuotas else { return Task {} }
        let logger = self.logger
        return Task {
            var partitions: [String: Int] = [:]
            var applied: Double?
            while !Task.isCancelled {
                for context in lanes {
                    let topic = topics.topics(of: context.lane).intake
                    if partitions[topic] == nil, let count = try? await context.consumer.partitionCount(topic: topic), count > 0 {
                        partitions[topic] = count
                    }
                }
                let total = partitions.values.reduce(0, +)
                let mine = assigned.withLock { all in
                    all.values.reduce(0) { $0 + $1.filter { partitions[$0.topic] != nil }.count }
                }
                if total > 0 {
                    let share = QuotaShare.of(owned: mine, total: total)
                    if share != applied {
                        router.applyQuotaShare(share)
                        counters.withLock { $0.quotaShare = share }
                        logger.info("fleet quota share", metadata: [
                            "worker.quota_share": "\(share)", "kafka.partitions_owned": "\(mine)", "kafka.partitions_total": "\(total)",
                        ])
                        applied = share
                    }
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}

/// A replica's share of a fleet-wide quota.
enum QuotaShare {
    /// `owned` of `total` partitions, in 0...1 (0 for none owned or none known).
    static func of(owned: Int, total: Int) -> Double {
        guard total > 0, owned > 0 else { return 0 }
        return min(1, Double(owned) / Double(total))
    }
}
