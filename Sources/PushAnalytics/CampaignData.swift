import Foundation

/// One (campaign, platform) row of the `campaign_funnel` view.
@dynamicMemberLookup
public struct CampaignFunnelRow: Sendable, Equatable {
    public var campaign: String
    /// `ios`, `android`, `web`, `huawei`, or `none` for a user id with no device to send to.
    public var platform: String
    public var deliveries = 0
    public var counts = FunnelCounts()
    /// created → accepted, seconds (nil: nothing accepted).
    public var p50Seconds: Double?
    public var p99Seconds: Double?
    public var firstSend: Date?
    public var lastSend: Date?

    public init(campaign: String, platform: String) {
        self.campaign = campaign
        self.platform = platform
    }

    public subscript<T>(dynamicMember keyPath: WritableKeyPath<FunnelCounts, T>) -> T {
        get { counts[keyPath: keyPath] }
        set { counts[keyPath: keyPath] = newValue }
    }

    /// Column names and counts, in table order.
    public var columns: [(name: String, value: Int)] { [("deliveries", deliveries)] + counts.columns }

    /// The rows' counts added up (percentiles are not: nil), sends spanning them all.
    public static func total(of rows: [CampaignFunnelRow], campaign: String) -> CampaignFunnelRow {
        var t = CampaignFunnelRow(campaign: campaign, platform: "total")
        for r in rows {
            t.deliveries += r.deliveries
            t.counts.add(r.counts)
            t.firstSend = [t.firstSend, r.firstSend].compactMap { $0 }.min()
            t.lastSend = [t.lastSend, r.lastSend].compactMap { $0 }.max()
        }
        return t
    }
}

/// A campaign's cancellation, open or resumed (`campaign_cancellations`).
public struct CampaignCancellation: Sendable, Equatable {
    public var by: String
    public var at: Date
    public var reason: String?
    /// Rows `pushfleet campaign cancel` moved to `cancelled`.
    public var deliveriesCancelled: Int
    public var resumedAt: Date?
    public var resumedBy: String?

    public init(by: String, at: Date, reason: String?, deliveriesCancelled: Int, resumedAt: Date?, resumedBy: String?) {
        self.by = by
        self.at = at
        self.reason = reason
        self.deliveriesCancelled = deliveriesCancelled
        self.resumedAt = resumedAt
        self.resumedBy = resumedBy
    }
}

/// What `pushfleet campaign status` knows of one campaign: its rows in the
/// ledger (a delivery has a row once a worker decided it), how fast they are
/// ending, its cancellation, and, when Kafka was asked, the bulk lane's
/// backlog (messages not consumed yet, of every campaign on that lane).
public struct CampaignStatus: Sendable, Equatable {
    public var campaign: String
    public var generatedAt: Date
    public var funnel: [CampaignFunnelRow]
    /// Deliveries with at least one provider request.
    public var sent = 0
    /// Rows that reached a final status in the last `window` seconds.
    public var finalInWindow = 0
    /// Provider requests of the campaign (last attempts) in the last `window` seconds.
    public var sentInWindow = 0
    /// The window the rates are measured over, seconds.
    public var window: Double = 60
    /// The newest cancellation, open or resumed; nil if never cancelled.
    public var cancellation: CampaignCancellation?
    /// Messages on the bulk lane's intake, retry and parked topics that its
    /// consumer group has not committed yet (all campaigns); nil: not asked.
    public var bulkBacklog: Int?

    public init(campaign: String, generatedAt: Date, funnel: [CampaignFunnelRow]) {
        self.campaign = campaign
        self.generatedAt = generatedAt
        self.funnel = funnel
    }

    public var total: CampaignFunnelRow { CampaignFunnelRow.total(of: funnel, campaign: campaign) }
    /// Is the campaign cancelled now?
    public var isCancelled: Bool { cancellation.map { $0.resumedAt == nil } ?? false }
    /// Deliveries ending per second, over the window.
    public var finalPerSecond: Double { Double(finalInWindow) / window }
    /// Provider requests per second, over the window.
    public var sendsPerSecond: Double { Double(sentInWindow) / window }
    /// Rows in the ledger not final yet.
    public var inFlight: Int { total.inProgress }

    /// Seconds until what is known to remain (the rows in flight and the bulk
    /// backlog, counted as one delivery a message) ends at the current rate;
    /// nil when nothing ends now or nothing remains. An estimate: a message
    /// to many devices, or another campaign's backlog, moves it.
    public var secondsToFinish: Double? {
        let remaining = inFlight + (bulkBacklog ?? 0)
        guard remaining > 0, finalInWindow > 0, !isCancelled else { return nil }
        return Double(remaining) / finalPerSecond
    }
}

/// One line of `pushfleet campaign list`.
public struct CampaignSummary: Sendable, Equatable {
    public var campaign: String
    public var firstCreated: Date?
    public var lastCreated: Date?
    public var deliveries = 0
    public var accepted = 0
    public var cancelled = 0
    public var inProgress = 0
    /// Cancelled now (an open cancellation).
    public var isCancelled = false

    public init(campaign: String) { self.campaign = campaign }
}
