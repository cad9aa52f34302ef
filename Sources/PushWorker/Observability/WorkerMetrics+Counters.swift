import PushCore

/// `WorkerMetrics` is the worker's latency observer: pass it as
/// `PushWorkerService(configuration:logger:observer:)`.
extension WorkerMetrics: WorkerObserver {}

extension WorkerMetrics {
    /// Brings the metrics up to `totals` (the worker's `stats`): counters grow
    /// by what was added since the previous call, gauges take the current
    /// value. Call it before each scrape (`ObservabilityServer`'s
    /// `beforeScrape`) or on a timer; concurrent calls never count twice.
    /// A total that went down (a new worker instance) starts a new baseline.
    public func export(_ totals: WorkerCounters) {
        exported.withLock { previous in
            let last = previous ?? WorkerCounters()
            for (topic, n) in totals.consumedByTopic { consumed(topic: topic, count: n - (last.consumedByTopic[topic] ?? 0)) }
            for (key, n) in totals.sent {
                sent(provider: key.provider, app: key.app, status: key.status, reason: key.reason, count: n - (last.sent[key] ?? 0))
            }
            for (tier, n) in totals.retriesByTier { retried(tier: tier, count: n - (last.retriesByTier[tier] ?? 0)) }
            for (lane, n) in totals.parkedMessagesByLane {
                let added = n - (last.parkedMessagesByLane[lane] ?? 0)
                if added > 0 { counter(MetricNames.parkedMessages, [("lane", lane.rawValue)]).increment(by: added) }
            }
            for (reason, n) in totals.deadLettersByReason {
                deadLettered(reason: reason, count: n - (last.deadLettersByReason[reason] ?? 0))
            }
            suppressed(count: totals.suppressed - last.suppressed)
            untrustedHeaders(count: totals.untrustedHeaders - last.untrustedHeaders)
            unreadableRetryAttempts(count: totals.unreadableRetryAttempts - last.unreadableRetryAttempts)
            for (key, n) in totals.credentialFailures {
                credentialFailures(provider: key.provider, app: key.app, kind: key.kind, count: n - (last.credentialFailures[key] ?? 0))
            }
            for (stage, n) in totals.poisonByStage { poisonRecords(stage: stage, count: n - (last.poisonByStage[stage] ?? 0)) }
            setInFlight(totals.inFlight)
            gauge(MetricNames.deliveriesInFlight).record(totals.deliveriesInFlight)
            gauge(MetricNames.inFlightBytes).record(totals.inFlightBytes)
            setPartitionsAssigned(totals.partitionsAssigned)
            if let share = totals.quotaShare { gauge(MetricNames.quotaShare).record(share) }
            for status in ["pending", "retrying", "parked"] {
                gauge(MetricNames.unfinishedDeliveries, [("status", status)]).record(totals.unfinishedByStatus[status] ?? 0)
            }
            gauge(MetricNames.oldestUnfinished).record(totals.oldestUnfinishedSeconds ?? 0)
            previous = totals
        }
    }
}
