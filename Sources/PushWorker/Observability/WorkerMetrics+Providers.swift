import PushCore
import PushProviders

extension WorkerMetrics {
    /// Brings the provider metrics up to one client's cumulative `stats()`:
    /// `pushfleet_token_refreshes_total`, `pushfleet_rate_limited_total` and
    /// `pushfleet_resent_without_status_total{reason}` grow by what was added since
    /// the previous call for the same provider, app and host (Web Push keeps
    /// one set of counters per push service), and
    /// `pushfleet_circuit_state{provider,app,host}` takes the breaker's state. Call it for
    /// every app's provider clients before each scrape.
    public func export(_ stats: ProviderClientStats, provider: Provider, app: String, host: String) {
        let key = ProviderKey(provider: provider, app: app, host: host)
        exportedProviders.withLock { previous in
            let last = previous[key] ?? ProviderClientStats()
            let refreshes = stats.tokenRefreshes - last.tokenRefreshes
            if refreshes > 0 {
                counter(MetricNames.tokenRefreshes, [("provider", provider.rawValue), label("app", app)]).increment(by: refreshes)
            }
            let limited = stats.rateLimited - last.rateLimited
            if limited > 0 {
                counter(MetricNames.rateLimited, [("provider", provider.rawValue), label("app", app)]).increment(by: limited)
            }
            resentWithoutStatus(provider: provider, reason: "goaway", count: stats.resentAfterGoaway - last.resentAfterGoaway)
            resentWithoutStatus(provider: provider, reason: "reset", count: stats.resentAfterReset - last.resentAfterReset)
            resentWithoutStatus(provider: provider, reason: "no_status", count: stats.resentNoStatus - last.resentNoStatus)
            setCircuitState(provider: provider, app: app, host: host,
                            state: CircuitState(rawValue: stats.circuitState.gaugeValue) ?? .open)
            previous[key] = stats
        }
    }

    struct ProviderKey: Hashable {
        var provider: Provider
        var app: String
        var host: String
    }
}
