import PushCore

extension WorkerMetrics {
    /// Creates at 0 every counter series whose labels the configuration
    /// already determines, so dashboards and alerts (`rate()`, `increase()`,
    /// "absent means healthy" mistakes) work from the first scrape instead of
    /// from the first event. Series with open label sets (a provider's reason,
    /// an intake reason) still appear when they first happen.
    public func registerZeroSeries(_ configuration: WorkerConfiguration) {
        let topics = configuration.topics
        for topic in topics.consumed { counter(MetricNames.messagesConsumed, [label("topic", topic)]).increment(by: 0) }
        for tier in configuration.retry.tiers { counter(MetricNames.retries, [label("tier", tier.name)]).increment(by: 0) }
        for reason in ["exhausted", "response_lost", "produce_failed"] {
            counter(MetricNames.deadLetters, [label("reason", reason)]).increment(by: 0)
        }
        counter(MetricNames.suppressedDuplicates).increment(by: 0)
        for role in ThreadCPU.roles { floatingCounter(MetricNames.threadCPU, [("thread", role)]).increment(by: 0) }
        floatingCounter(MetricNames.processCPU).increment(by: 0)
        counter(MetricNames.untrustedHeaders).increment(by: 0)
        counter(MetricNames.unreadableRetryAttempts).increment(by: 0)
        for stage in [PoisonStage.processing, .write, .deadLetter] {
            counter(MetricNames.poisonRecords, [label("stage", stage.rawValue)]).increment(by: 0)
        }
        for kind in ["delivered", "opened"] { counter(MetricNames.receipts, [("kind", kind)]).increment(by: 0) }
        for (app, settings) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var providers: [Provider] = []
            if settings.apns != nil { providers.append(.apns) }
            if settings.fcm != nil { providers.append(.fcm) }
            if settings.webpush != nil { providers.append(.webpush) }
            if settings.hms != nil { providers.append(.hms) }
            for provider in providers {
                counter(MetricNames.tokenRefreshes, [("provider", provider.rawValue), label("app", app)]).increment(by: 0)
                counter(MetricNames.rateLimited, [("provider", provider.rawValue), label("app", app)]).increment(by: 0)
            }
            for provider in providers {
                for reason in ["goaway", "reset", "no_status"] {
                    counter(MetricNames.resentWithoutStatus, [("provider", provider.rawValue), ("reason", reason)]).increment(by: 0)
                }
            }
        }
    }
}
