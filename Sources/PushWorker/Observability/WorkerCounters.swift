import PushCore

/// Worker totals since start, for logs, tests and the metrics the
/// executable exports (see `pushfleet_*` in docs/metrics.md).
///
/// Each field has one writer: what a batch did is counted by the batch
/// pipeline (its decoder the headers it distrusted, its sender the
/// credentials it could not get); what the poll loop sees (messages taken,
/// the in-flight gauges, pauses) by the loop; assigned partitions by the
/// rebalance handler.
public struct WorkerCounters: Sendable {
    /// Batches finished (outcomes written, offsets stored).
    public var batches = 0
    /// Messages of finished batches.
    public var messages = 0
    /// Delivery records written (one per notification × device per batch).
    public var deliveries = 0
    /// Deliveries not sent because the ledger (or the same batch) had them already:
    /// `pushfleet_suppressed_duplicates_total`.
    public var suppressed = 0
    /// Intake messages rejected (undecodable, unknown version, invalid).
    public var rejectedMessages = 0
    /// Messages on a topic producers write (intake, devices) that carried
    /// `pushfleet-*` retry headers, which were ignored:
    /// `pushfleet_untrusted_headers_total`.
    public var untrustedHeaders = 0
    /// Messages on a retry topic without a readable `pushfleet-attempt`
    /// (absent, not a number, below 1), sent as attempt 1:
    /// `pushfleet_retry_attempt_unreadable_total`.
    public var unreadableRetryAttempts = 0
    /// Records PostgreSQL or Kafka refused and that were isolated from their
    /// batch (`write_failed`, `dead_letter_failed`, `processing_failed`):
    /// `pushfleet_poison_records_total{stage}`.
    public var poisonByStage: [String: Int] = [:]
    /// Retry and dead-letter messages produced.
    public var produced = 0
    /// Messages taken from each topic: `pushfleet_messages_consumed_total{topic}`.
    public var consumedByTopic: [String: Int] = [:]
    /// Deliveries by outcome: `pushfleet_notifications_sent_total{provider,app,status,reason}`.
    public var sent: [SentKey: Int] = [:]
    /// Retry messages produced per tier name: `pushfleet_retries_total{tier}`.
    public var retriesByTier: [String: Int] = [:]
    /// Messages produced to each lane's parked topic: `pushfleet_parked_messages_total{lane}`.
    public var parkedMessagesByLane: [Lane: Int] = [:]
    /// Dead letters per short category (`exhausted`, `invalid`, `undecodable`,
    /// `unsupported_version`, `response_lost`): `pushfleet_dead_letters_total{reason}`.
    public var deadLettersByReason: [String: Int] = [:]
    /// Messages taken and not yet finished right now, per lane (each lane's
    /// loop writes its own); `pushfleet_in_flight` is their sum.
    public var inFlightByLane: [Lane: Int] = [:]
    /// Messages taken and not yet finished right now, both lanes.
    public var inFlight: Int { inFlightByLane.values.reduce(0, +) }
    /// Deliveries holding permits right now (`DeliveryPermits`, both lanes): `pushfleet_deliveries_in_flight`.
    public var deliveriesInFlight = 0
    /// Bytes (keys and values) of the messages batches hold right now, per lane.
    public var inFlightBytesByLane: [Lane: Int] = [:]
    /// Bytes of the messages batches hold right now, both lanes: `pushfleet_in_flight_bytes`.
    public var inFlightBytes: Int { inFlightBytesByLane.values.reduce(0, +) }
    /// Partitions assigned right now: `pushfleet_partitions_assigned`.
    public var partitionsAssigned = 0
    /// Partitions paused by backpressure right now, per lane.
    public var partitionsBackpressuredByLane: [Lane: Int] = [:]
    /// Times a partition was paused because the in-flight bound was reached.
    public var backpressurePauses = 0
    /// Deliveries not final in the ledger, fleet-wide, per status (`pending`,
    /// `retrying`, `parked`), as PostgreSQL last said:
    /// `pushfleet_unfinished_deliveries{status}`.
    public var unfinishedByStatus: [String: Int] = [:]
    /// Seconds since the oldest unfinished delivery's `created_at`:
    /// `pushfleet_oldest_unfinished_seconds` (nil: none).
    public var oldestUnfinishedSeconds: Double?
    /// This replica's share of the fleet-wide provider quotas (its share of
    /// the lanes' intake partitions); nil when no quota is fleet-wide:
    /// `pushfleet_quota_share`.
    public var quotaShare: Double?
    /// User-id recipients that had no valid device for the app.
    public var usersWithoutDevices = 0
    /// Outcome transactions committed, and their total time (`pushfleet_batch_commit_seconds`
    /// is fed per transaction through `WorkerObserver`).
    public var outcomeCommits = 0
    public var outcomeCommitSeconds = 0.0
    /// Device registry messages applied (register + unregister).
    public var deviceUpdates = 0
    /// Sends that never became a request because the credential for it could
    /// not be had (OAuth token endpoint down or refusing, a JWT that could not
    /// be signed): `pushfleet_credential_failures_total{provider,app,kind}`.
    /// They spend no attempt; the delivery waits on a retry tier.
    public var credentialFailures: [CredentialFailureKey: Int] = [:]

    /// The labels of `pushfleet_credential_failures_total`.
    public struct CredentialFailureKey: Sendable, Hashable {
        public var provider: Provider
        public var app: String
        /// `token_endpoint`, `token_endpoint_unreachable`, `invalid_token_response`, `signing`, `invalid_key`, ….
        public var kind: String
    }

    /// The labels of `pushfleet_notifications_sent_total`.
    public struct SentKey: Sendable, Hashable {
        public var provider: Provider
        public var app: String
        public var status: DeliveryStatus
        /// Provider reason or the worker's own (`Expired`, `NoValidDevices`); "" for none.
        public var reason: String
    }

    public init() {}
}
