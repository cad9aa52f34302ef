/// The agreed Prometheus metric names (see docs/metrics.md, "Metrics, health
/// and logs"). Counters end in `_total`, histograms in `_seconds`.
public enum MetricNames {
    public static let messagesConsumed = "pushfleet_messages_consumed_total"
    public static let notificationsSent = "pushfleet_notifications_sent_total"
    public static let providerRequest = "pushfleet_provider_request_seconds"
    /// The notification's `created_at` (its producer's clock) → accepted by the provider, retries included.
    public static let createdToAccepted = "pushfleet_created_to_accepted_seconds"
    /// The Kafka timestamp of the intake message a send came from → accepted by
    /// the provider: the fleet's own wait and send, for acceptances on a send
    /// made from an intake message (a first try, or a replay's).
    public static let enqueuedToAccepted = "pushfleet_enqueued_to_accepted_seconds"
    public static let inFlight = "pushfleet_in_flight"
    public static let deliveriesInFlight = "pushfleet_deliveries_in_flight"
    public static let inFlightBytes = "pushfleet_in_flight_bytes"
    public static let retries = "pushfleet_retries_total"
    public static let deadLetters = "pushfleet_dead_letters_total"
    public static let suppressedDuplicates = "pushfleet_suppressed_duplicates_total"
    public static let consumerLag = "pushfleet_consumer_lag"
    /// The lag of a lane (label `lane`): its consumer's partitions summed.
    public static let laneLag = "pushfleet_lane_lag"
    /// Messages produced to the parked topics (label `lane`): with the
    /// deliveries parked (`pushfleet_notifications_sent_total{status="parked"}`),
    /// what a provider's trouble costs in writes.
    public static let parkedMessages = "pushfleet_parked_messages_total"
    /// Deliveries not final in the ledger, fleet-wide (label `status`:
    /// `pending`, `retrying`, `parked`): the backlog behind the retry tiers
    /// and parked topics, which consumer lag does not show.
    public static let unfinishedDeliveries = "pushfleet_unfinished_deliveries"
    /// Age of the oldest unfinished delivery (seconds since its `created_at`).
    public static let oldestUnfinished = "pushfleet_oldest_unfinished_seconds"
    /// This replica's share of the fleet-wide provider quotas (0...1).
    public static let quotaShare = "pushfleet_quota_share"
    public static let circuitState = "pushfleet_circuit_state"
    public static let tokenRefreshes = "pushfleet_token_refreshes_total"
    /// Requests re-sent, by a provider client or by libcurl itself, after a try
    /// that got no HTTP status; labels `provider`, `reason`: `goaway` (refused
    /// unprocessed: above a GOAWAY's last-stream-id or REFUSED_STREAM, re-sent by
    /// libcurl on a connection that was not reset; curl 16), `reset` (curl 92,
    /// 18, 55, 56; libcurl's re-send after a TCP RST), `no_status` (curl 52).
    public static let resentWithoutStatus = "pushfleet_resent_without_status_total"
    public static let rateLimited = "pushfleet_rate_limited_total"
    public static let receipts = "pushfleet_receipts_total"
    public static let batchCommit = "pushfleet_batch_commit_seconds"
    public static let partitionsAssigned = "pushfleet_partitions_assigned"
    public static let untrustedHeaders = "pushfleet_untrusted_headers_total"
    public static let unreadableRetryAttempts = "pushfleet_retry_attempt_unreadable_total"
    public static let poisonRecords = "pushfleet_poison_records_total"
    public static let credentialFailures = "pushfleet_credential_failures_total"
    /// Always 1; its labels are PushFleet's version and the loaded C libraries' versions.
    public static let buildInfo = "pushfleet_build_info"
    /// CPU seconds by thread role (label `thread`: `ThreadCPU.roles`).
    public static let threadCPU = "pushfleet_thread_cpu_seconds_total"
    /// The standard process metrics of Prometheus's client libraries.
    public static let processCPU = "process_cpu_seconds_total"
    public static let processResidentMemory = "process_resident_memory_bytes"
}

/// Histogram bucket upper bounds, in seconds, per histogram metric.
public enum MetricBuckets {
    /// Provider round trip: 1 ms to 10 s.
    public static let providerRequest: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// Notification `created_at` → accepted by the provider: 5 ms to 10 min
    /// (retries through the delayed topics land in the upper buckets).
    public static let createdToAccepted: [Double] = [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
    ]
    /// Intake message's Kafka timestamp → accepted: the same range (a backlog waits minutes).
    public static let enqueuedToAccepted: [Double] = createdToAccepted
    /// One PostgreSQL outcome transaction: 1 ms to 10 s.
    public static let batchCommit: [Double] = providerRequest

    /// Buckets by histogram name, as `Duration`s for swift-prometheus's
    /// `PrometheusMetricsFactory.durationHistogramBuckets` (swift-metrics
    /// `Timer`s become Prometheus duration histograms there).
    public static var durationBuckets: [String: [Duration]] {
        func durations(_ seconds: [Double]) -> [Duration] {
            // Constant bucket bounds (1 ms … 10 min): each is an exact whole number of nanoseconds.
            seconds.compactMap { Int64(exactly: ($0 * 1e9).rounded()).map(Duration.nanoseconds) }
        }
        return [
            MetricNames.providerRequest: durations(providerRequest),
            MetricNames.createdToAccepted: durations(createdToAccepted),
            MetricNames.enqueuedToAccepted: durations(enqueuedToAccepted),
            MetricNames.batchCommit: durations(batchCommit),
        ]
    }
}

/// The ledger state of a host's circuit breaker, as the gauge value.
public enum CircuitState: Int, Sendable, CaseIterable {
    case closed = 0
    case halfOpen = 1
    case open = 2
}
