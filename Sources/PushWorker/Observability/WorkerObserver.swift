import PushCore

/// Per-event hooks for what counters cannot carry (latency histograms).
/// All methods have empty defaults; the executable passes its metrics.
public protocol WorkerObserver: Sendable {
    /// One provider HTTP round trip (request submitted → response or failure).
    func providerRoundTrip(provider: Provider, seconds: Double)
    /// Notification `created_at` → provider acceptance, retries included.
    func createdToAccepted(provider: Provider, seconds: Double)
    /// The Kafka timestamp of the intake message the accepted send came from →
    /// provider acceptance (not told for a send from a retry or parked message).
    func enqueuedToAccepted(provider: Provider, seconds: Double)
    /// One PostgreSQL outcome transaction took `seconds`.
    func batchCommitted(seconds: Double)
}

extension WorkerObserver {
    public func providerRoundTrip(provider: Provider, seconds: Double) {}
    public func createdToAccepted(provider: Provider, seconds: Double) {}
    public func enqueuedToAccepted(provider: Provider, seconds: Double) {}
    public func batchCommitted(seconds: Double) {}
}

/// Observes nothing.
struct NoWorkerObserver: WorkerObserver {}
