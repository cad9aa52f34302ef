import Foundation

/// The numbers behind `pushfleet report`: read by `ReportQueries`, rendered
/// by `ReportRenderer` (pure: rows in, text out).
public struct ReportData: Sendable, Equatable {
    public var generatedAt: Date
    /// Start of the window (rounded down to the hour, as the hourly views are).
    public var since: Date
    public var app: String?
    public var funnel: [FunnelRow]
    public var failures: [FailureRow]
    public var series: StatusSeries
    /// Final deliveries by how many attempts their last series needed.
    public var retries: [RetryRow]
    /// created → accepted and enqueued → accepted per app × platform.
    public var latency: [LatencyRow]
    /// Messages refused at intake and deliveries dead-lettered (replayed since or not), by kind.
    public var rejections: [RejectionRow]
    /// What came of the dead letters `pushfleet dlq replay` replayed, per app × platform.
    public var replays: [ReplayRow]
    /// Deliveries whose receipt carries a device time after the report's time
    /// (a device clock ahead): the chart shows them at the report's time.
    public var futureReceipts: Int

    public init(generatedAt: Date, since: Date, app: String?, funnel: [FunnelRow], failures: [FailureRow], series: StatusSeries,
                retries: [RetryRow] = [], latency: [LatencyRow] = [], rejections: [RejectionRow] = [], futureReceipts: Int = 0,
                replays: [ReplayRow] = []) {
        self.generatedAt = generatedAt
        self.since = since
        self.app = app
        self.funnel = funnel
        self.failures = failures
        self.series = series
        self.retries = retries
        self.latency = latency
        self.rejections = rejections
        self.futureReceipts = futureReceipts
        self.replays = replays
    }
}

/// Final deliveries whose last attempt series needed `attempts` provider
/// attempts (a `dlq replay` starts a new series).
public struct RetryRow: Sendable, Equatable {
    public var attempts: Int
    public var deliveries: Int
    public var accepted: Int
    public var deadLettered: Int
    /// Mean time from the first to the last attempt of the series.
    public var averageSecondsRetrying: Double
    /// Of `deliveries`, those whose dead letter was replayed (their series is the replay's).
    public var replayed: Int

    public init(attempts: Int, deliveries: Int, accepted: Int, deadLettered: Int, averageSecondsRetrying: Double, replayed: Int = 0) {
        self.attempts = attempts
        self.deliveries = deliveries
        self.accepted = accepted
        self.deadLettered = deadLettered
        self.averageSecondsRetrying = averageSecondsRetrying
        self.replayed = replayed
    }
}

/// Percentiles of one clock → `accepted_at`, in milliseconds.
public struct LatencyRow: Sendable, Equatable {
    /// Where the clock starts.
    public enum Clock: String, Sendable {
        /// The notification's `created_at`, set by its producer.
        case created
        /// `enqueued_at`: the Kafka timestamp of the intake message the delivery first came in.
        case enqueued
    }

    public var app: String
    public var platform: String
    public var clock: Clock
    public var accepted: Int
    public var p50: Double
    public var p90: Double
    public var p99: Double

    public init(app: String, platform: String, clock: Clock = .created, accepted: Int, p50: Double, p90: Double, p99: Double) {
        self.app = app
        self.platform = platform
        self.clock = clock
        self.accepted = accepted
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
    }
}

/// Rejected messages (`intake`) or dead-lettered deliveries (`delivery`) of one kind.
public struct RejectionRow: Sendable, Equatable {
    public var source: String
    public var kind: String
    /// Every one, replayed since or not.
    public var count: Int
    /// Of `count`, the dead letters `pushfleet dlq replay` replayed since.
    public var replayed: Int
    public var example: String

    public init(source: String, kind: String, count: Int, replayed: Int = 0, example: String) {
        self.source = source
        self.kind = kind
        self.count = count
        self.replayed = replayed
        self.example = example
    }
}

/// The replays of one app × platform's dead-lettered deliveries and what
/// came of them (the view `delivery_replay_outcomes`): each replay of a
/// delivery counts once.
public struct ReplayRow: Sendable, Equatable {
    public var app: String
    public var platform: String
    public var replayed: Int
    /// Accepted, delivered or opened now.
    public var recovered: Int
    /// Dead-lettered now, or again before a later replay.
    public var deadLetteredAgain: Int
    /// Now `invalid_token`, `rejected` or `expired`.
    public var failed: Int
    /// Still pending, retrying or parked.
    public var inProgress: Int
    /// Attempts of the series the replays reopened.
    public var attemptsBefore: Int

    public init(app: String, platform: String, replayed: Int, recovered: Int, deadLetteredAgain: Int, failed: Int, inProgress: Int,
                attemptsBefore: Int) {
        self.app = app
        self.platform = platform
        self.replayed = replayed
        self.recovered = recovered
        self.deadLetteredAgain = deadLetteredAgain
        self.failed = failed
        self.inProgress = inProgress
        self.attemptsBefore = attemptsBefore
    }
}

/// What became of a funnel line's deliveries: the counts every funnel view
/// has (`delivery_funnel_hourly`, `campaign_funnel`), under the same names.
/// `accepted` counts delivered and opened too (cumulative, as the views do).
public struct FunnelCounts: Sendable, Equatable {
    public var accepted = 0
    public var delivered = 0
    public var opened = 0
    public var invalidToken = 0
    public var rejected = 0
    public var expired = 0
    public var deadLettered = 0
    /// Not sent: the campaign was cancelled.
    public var cancelled = 0
    /// `pending`, `retrying` or `parked`: not final yet.
    public var inProgress = 0

    public init() {}

    /// Column names (the views') and counts, in table order.
    public var columns: [(name: String, value: Int)] {
        [("accepted", accepted), ("delivered", delivered), ("opened", opened), ("invalid_token", invalidToken),
         ("rejected", rejected), ("expired", expired), ("dead_lettered", deadLettered), ("cancelled", cancelled),
         ("in_progress", inProgress)]
    }

    /// Adds `other`'s counts to these.
    public mutating func add(_ other: FunnelCounts) {
        accepted += other.accepted; delivered += other.delivered; opened += other.opened
        invalidToken += other.invalidToken; rejected += other.rejected; expired += other.expired
        deadLettered += other.deadLettered; cancelled += other.cancelled; inProgress += other.inProgress
    }
}

/// One app × platform line of the delivery funnel.
@dynamicMemberLookup
public struct FunnelRow: Sendable, Equatable {
    public var app: String
    public var platform: String
    public var enqueued = 0
    public var counts = FunnelCounts()

    public init(app: String, platform: String) {
        self.app = app
        self.platform = platform
    }

    public subscript<T>(dynamicMember keyPath: WritableKeyPath<FunnelCounts, T>) -> T {
        get { counts[keyPath: keyPath] }
        set { counts[keyPath: keyPath] = newValue }
    }

    /// Column names and values, in table order.
    public var columns: [(name: String, value: Int)] { [("enqueued", enqueued)] + counts.columns }
}

/// Failed deliveries with one final status and provider reason.
public struct FailureRow: Sendable, Equatable {
    public var app: String
    public var platform: String
    public var status: String
    public var reason: String
    public var deliveries: Int
    /// Share of all the deliveries of that app/platform in the window (the
    /// funnel's `enqueued`; `ReportRenderer.shareCaption`).
    public var share: Double

    public init(app: String, platform: String, status: String, reason: String, deliveries: Int, share: Double) {
        self.app = app
        self.platform = platform
        self.status = status
        self.reason = reason
        self.deliveries = deliveries
        self.share = share
    }
}

/// Deliveries per time bucket by current status, bucketed by when the
/// delivery reached that status (opened_at, delivered_at, else final_at).
public struct StatusSeries: Sendable, Equatable {
    public var bucketSeconds: Int
    /// Bucket start times, consecutive, oldest first.
    public var buckets: [Date]
    /// One count per bucket for each status present, in `DeliveryStatus` order.
    public var series: [(status: String, counts: [Int])]

    public init(bucketSeconds: Int, buckets: [Date], series: [(status: String, counts: [Int])]) {
        self.bucketSeconds = bucketSeconds
        self.buckets = buckets
        self.series = series
    }

    public static func == (a: StatusSeries, b: StatusSeries) -> Bool {
        a.bucketSeconds == b.bucketSeconds && a.buckets == b.buckets
            && a.series.count == b.series.count && zip(a.series, b.series).allSatisfy { $0.status == $1.status && $0.counts == $1.counts }
    }

    /// A bucket width giving at most about `target` buckets over `span` seconds.
    public static func bucketSeconds(span: Double, target: Int = 48) -> Int {
        let nice = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
        let wanted = span / Double(max(1, target))
        return nice.first { Double($0) >= wanted } ?? 86400
    }
}
