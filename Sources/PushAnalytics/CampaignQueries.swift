import Foundation
import PushCore
import PushPostgres

/// The queries behind `pushfleet campaign status`, `campaign list` and
/// `report --campaign`: the `campaign_funnel` view, the campaign's recent
/// rows (its rates) and `campaign_cancellations`. Every query of one
/// campaign reaches its rows through `deliveries_campaign_idx`.
public enum CampaignQueries {
    /// `campaign_funnel` for one campaign, by platform.
    public static func funnel(_ campaign: String, on connection: PostgresConnection) async throws -> [CampaignFunnelRow] {
        let rows = try await connection.query(
            """
            SELECT platform, deliveries, accepted, delivered, opened, invalid_token, rejected, expired, dead_lettered,
                   cancelled, in_progress, p50_seconds::float8 AS p50, p99_seconds::float8 AS p99, first_send, last_send
            FROM campaign_funnel WHERE campaign = $1 ORDER BY platform
            """, [.text(campaign)])
        return try rows.rows.map { r in
            var row = CampaignFunnelRow(campaign: campaign, platform: r["platform"] ?? "")
            row.deliveries = Int(try r.int("deliveries") ?? 0)
            row.counts = try FunnelCounts(r)
            row.p50Seconds = try r.double("p50")
            row.p99Seconds = try r.double("p99")
            row.firstSend = try r.date("first_send")
            row.lastSend = try r.date("last_send")
            return row
        }
    }

    /// Everything `campaign status` shows from PostgreSQL (the bulk backlog
    /// comes from Kafka), with rates over the last `window` seconds.
    public static func status(_ campaign: String, on connection: PostgresConnection, window: Double = 60,
                              now: Date = Date()) async throws -> CampaignStatus {
        var status = CampaignStatus(campaign: campaign, generatedAt: now, funnel: try await funnel(campaign, on: connection))
        status.window = window
        let since = now.addingTimeInterval(-window)
        let recent = try await connection.query(
            """
            SELECT count(first_attempt_at) AS sent,
                   count(*) FILTER (WHERE final_at >= $2) AS final_recent,
                   count(*) FILTER (WHERE last_attempt_at >= $2) AS sent_recent
            FROM deliveries WHERE campaign = $1
            """, [.text(campaign), .timestamp(since)])
        status.sent = Int(try recent.first?.int("sent") ?? 0)
        status.finalInWindow = Int(try recent.first?.int("final_recent") ?? 0)
        status.sentInWindow = Int(try recent.first?.int("sent_recent") ?? 0)
        status.cancellation = try await cancellation(campaign, on: connection)
        return status
    }

    /// The campaign's newest cancellation, open or resumed.
    public static func cancellation(_ campaign: String, on connection: PostgresConnection) async throws -> CampaignCancellation? {
        let rows = try await connection.query(
            """
            SELECT cancelled_by, cancelled_at, reason, deliveries_cancelled, resumed_at, resumed_by
            FROM campaign_cancellations WHERE campaign = $1 ORDER BY cancelled_at DESC, id DESC LIMIT 1
            """, [.text(campaign)])
        guard let r = rows.first, let by = r["cancelled_by"], let at = try r.date("cancelled_at") else { return nil }
        return CampaignCancellation(by: by, at: at, reason: r["reason"], deliveriesCancelled: Int(try r.int("deliveries_cancelled") ?? 0),
                                    resumedAt: try r.date("resumed_at"), resumedBy: r["resumed_by"])
    }

    /// Campaigns with deliveries created since `since`, or cancelled since,
    /// newest first, at most `limit`.
    public static func list(since: Date, limit: Int = 50, on connection: PostgresConnection) async throws -> [CampaignSummary] {
        let rows = try await connection.query(
            """
            WITH d AS (
                SELECT campaign, min(created_at) AS first_created, max(created_at) AS last_created, count(*) AS deliveries,
                       count(accepted_at) AS accepted, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
                       count(*) FILTER (WHERE status IN ('pending', 'retrying', 'parked')) AS in_progress
                FROM deliveries WHERE campaign IS NOT NULL AND created_at >= $1
                GROUP BY campaign),
            c AS (
                SELECT DISTINCT campaign FROM campaign_cancellations WHERE resumed_at IS NULL OR cancelled_at >= $1)
            SELECT COALESCE(d.campaign, c.campaign) AS campaign, d.first_created, d.last_created,
                   COALESCE(d.deliveries, 0) AS deliveries, COALESCE(d.accepted, 0) AS accepted,
                   COALESCE(d.cancelled, 0) AS cancelled, COALESCE(d.in_progress, 0) AS in_progress,
                   EXISTS (SELECT 1 FROM campaign_cancellations o
                           WHERE o.campaign = COALESCE(d.campaign, c.campaign) AND o.resumed_at IS NULL) AS open
            FROM d FULL JOIN c ON c.campaign = d.campaign
            ORDER BY d.last_created DESC NULLS LAST, 1
            LIMIT $2
            """, [.timestamp(since), .int(Int64(limit))])
        return try rows.rows.map { r in
            var s = CampaignSummary(campaign: r["campaign"] ?? "")
            s.firstCreated = try r.date("first_created")
            s.lastCreated = try r.date("last_created")
            s.deliveries = Int(try r.int("deliveries") ?? 0)
            s.accepted = Int(try r.int("accepted") ?? 0)
            s.cancelled = Int(try r.int("cancelled") ?? 0)
            s.inProgress = Int(try r.int("in_progress") ?? 0)
            s.isCancelled = try r.bool("open") ?? false
            return s
        }
    }
}
