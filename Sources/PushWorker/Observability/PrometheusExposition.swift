import Prometheus

/// A Prometheus registry plus the swift-metrics factory that feeds it, with
/// PushFleet's histogram buckets. The executable bootstraps
/// `MetricsSystem` with `factory`; the observability server renders `text()`.
/// Tests make their own instance and pass `factory` to `WorkerMetrics`.
public final class PrometheusExposition: Sendable {
    /// The registry every metric lands in.
    public let registry: PrometheusCollectorRegistry
    /// swift-metrics → Prometheus: counters, gauges (non-aggregating
    /// recorders) and duration histograms (timers, with `MetricBuckets`).
    public let factory: PrometheusMetricsFactory

    /// The Prometheus text format content type served at `/metrics`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// - Parameter registry: a fresh registry by default (not swift-prometheus's
    ///   process-wide one, so tests and processes do not share state).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = MetricBuckets.durationBuckets
        self.factory = factory
    }

    /// The current values in the Prometheus text exposition format (0.0.4).
    public func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        registry.emit(into: &buffer)
        return buffer
    }

    /// `render()` as a string.
    public func text() -> String { String(decoding: render(), as: UTF8.self) }
}
