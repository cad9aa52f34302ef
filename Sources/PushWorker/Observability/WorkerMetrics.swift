import Foundation
import Metrics
import PushCore
import PushProviders

/// The worker's metrics, named for the events that move them. Each series
/// (metric name + label values) is created once through swift-metrics and
/// cached, so recording is a dictionary lookup under a lock plus an atomic
/// update. Label values are bounded by `LabelBudget`: never a device token,
/// a secret or free text; unusual or excess values are recorded as `other`.
///
/// Pass the factory to use (tests use a `PrometheusExposition`'s); the
/// default is whatever the process bootstrapped into `MetricsSystem`.
public final class WorkerMetrics: Sendable {
    private let factory: any MetricsFactory
    private let budget = LabelBudget()
    private let counters = Locked<[SeriesKey: Counter]>([:])
    private let gauges = Locked<[SeriesKey: Gauge]>([:])
    private let timers = Locked<[SeriesKey: Metrics.Timer]>([:])
    private let floatingCounters = Locked<[SeriesKey: FloatingPointCounter]>([:])
    /// The per-request timers by provider: found without building a series key.
    let roundTripTimers = Locked<[Provider: Metrics.Timer]>([:])
    let createdTimers = Locked<[Provider: Metrics.Timer]>([:])
    let enqueuedTimers = Locked<[Provider: Metrics.Timer]>([:])
    let inFlightCount = Locked(0)
    /// The totals `export(_:)` last brought the metrics up to.
    let exported = Locked<WorkerCounters?>(nil)
    /// The provider client stats `export(_:provider:app:host:)` last saw.
    let exportedProviders = Locked<[ProviderKey: ProviderClientStats]>([:])
    /// The CPU readings `exportProcess` last brought the counters up to.
    let processBaseline = Locked(ProcessBaseline())

    /// - Parameter factory: where the metric objects come from.
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    // MARK: Series cache

    private struct SeriesKey: Hashable {
        var name: String
        var labels: [String]
        init(_ name: String, _ dimensions: [(String, String)]) {
            self.name = name
            self.labels = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    /// The series `name` + `dimensions` from `cache`, made through the factory the first time.
    private func series<Metric>(_ cache: Locked<[SeriesKey: Metric]>, _ name: String, _ dimensions: [(String, String)],
                                make: (String, [(String, String)], any MetricsFactory) -> Metric) -> Metric {
        let key = SeriesKey(name, dimensions)
        return cache.withLock { cache in
            if let existing = cache[key] { return existing }
            let made = make(name, dimensions, factory)
            cache[key] = made
            return made
        }
    }

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Counter {
        series(counters, name, dimensions) { Counter(label: $0, dimensions: $1, factory: $2) }
    }

    func floatingCounter(_ name: String, _ dimensions: [(String, String)] = []) -> FloatingPointCounter {
        series(floatingCounters, name, dimensions) { FloatingPointCounter(label: $0, dimensions: $1, factory: $2) }
    }

    func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> Gauge {
        series(gauges, name, dimensions) { Gauge(label: $0, dimensions: $1, factory: $2) }
    }

    /// Removes the gauges of `name` whose labels `keep` rejects (e.g. the lag
    /// of partitions this worker no longer owns, so fleet-wide sums stay right).
    func removeGauges(_ name: String, keep: ([String]) -> Bool) {
        let gone: [Gauge] = gauges.withLock { cache in
            let keys = cache.keys.filter { $0.name == name && !keep($0.labels) }
            return keys.compactMap { cache.removeValue(forKey: $0) }
        }
        for gauge in gone { gauge.destroy() }
    }

    func timer(_ name: String, _ dimensions: [(String, String)] = []) -> Metrics.Timer {
        series(timers, name, dimensions) { Metrics.Timer(label: $0, dimensions: $1, factory: $2) }
    }

    /// `name{provider=...}` through a cache keyed by the provider alone: these
    /// are recorded once per request, and the general lookup allocates the
    /// key's label arrays and hashes its strings every time.
    func providerTimer(_ name: String, _ provider: Provider, cache: Locked<[Provider: Metrics.Timer]>) -> Metrics.Timer {
        if let cached = cache.withLock({ $0[provider] }) { return cached }
        let made = timer(name, [("provider", provider.rawValue)])
        cache.withLock { $0[provider] = made }
        return made
    }

    /// A label value within its budget (see `LabelBudget`).
    func label(_ name: String, _ value: String) -> (String, String) {
        (name, budget.bounded(name, value))
    }

    /// Records seconds into a timer; negative (clock skew) counts as zero,
    /// NaN is ignored.
    func record(_ timer: Metrics.Timer, seconds: Double) {
        guard !seconds.isNaN else { return }
        let nanoseconds = min(max(seconds, 0) * 1e9, Double(Int64.max / 2))
        timer.recordNanoseconds(Int64(nanoseconds))
    }
}
