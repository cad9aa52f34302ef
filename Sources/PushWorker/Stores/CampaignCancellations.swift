import Foundation
import PushCore
import PushPostgres

/// The kill switch's state in PostgreSQL (`campaign_cancellations`, migration
/// 0018): what `pushfleet campaign cancel` and `resume` write, and what every
/// worker reads each second into its `CampaignStops`. PostgreSQL holds it
/// because every replica already depends on it, it survives restarts of
/// every component, and a worker started later reads it before its first
/// batch (docs/operations.md, "Stopping a campaign").
public enum CampaignCancellations {
    /// The longest reason a cancellation keeps, in UTF-8 bytes (it goes into
    /// the `detail` of every delivery row it ends).
    public static let maxReasonBytes = 500

    /// One cancellation, open or resumed.
    public struct Record: Sendable, Equatable {
        public var campaign: String
        public var stop: CampaignStops.Stop
        /// Rows `cancel` moved to `cancelled` (those not final in the ledger then).
        public var deliveriesCancelled: Int
        public var resumedAt: Date?
        public var resumedBy: String?
    }

    /// What `cancel` did.
    public struct Cancelled: Sendable {
        /// The open cancellation (a campaign already cancelled keeps its first one).
        public var record: Record
        /// False when the campaign was cancelled already.
        public var isNew: Bool
        /// Rows moved to `cancelled` by this call.
        public var deliveriesCancelled: Int
    }

    /// Every open cancellation, by campaign: what a worker holds.
    public static func open(on connection: PostgresConnection) async throws -> [String: CampaignStops.Stop] {
        let rows = try await connection.query(
            prepared: "SELECT campaign, reason, cancelled_by, cancelled_at FROM campaign_cancellations WHERE resumed_at IS NULL")
        var stops: [String: CampaignStops.Stop] = [:]
        for row in rows.rows {
            guard let campaign = row["campaign"], let by = row["cancelled_by"], let at = try row.date("cancelled_at") else { continue }
            stops[campaign] = CampaignStops.Stop(reason: row["reason"], by: by, at: at)
        }
        return stops
    }

    /// Cancels `campaign` fleet-wide: records the cancellation (committed on
    /// its own, so the workers see it at their next read whatever follows),
    /// then moves every row of the campaign that is not final (`pending`,
    /// `retrying`, `parked`) to `cancelled`, with who, when and why in its
    /// `detail`. Cancelling a cancelled campaign keeps the first cancellation
    /// and sweeps again.
    public static func cancel(_ campaign: String, reason: String?, by: String,
                              on connection: PostgresConnection) async throws -> Cancelled {
        let inserted = try await connection.query(
            """
            INSERT INTO campaign_cancellations (campaign, reason, cancelled_by) VALUES ($1, $2, $3)
            ON CONFLICT (campaign) WHERE resumed_at IS NULL DO NOTHING
            RETURNING id
            """, [.text(campaign), reason.map(PostgresValue.text) ?? .null, .text(by)])
        guard let open = try await record(campaign, on: connection) else {
            throw PostgresError.decoding("campaign_cancellations has no open row for \(campaign) after the insert")
        }
        let swept = try await connection.query(
            """
            WITH s AS (
                UPDATE deliveries SET status = 'cancelled', provider_reason = $2, detail = $3, final_at = now(), updated_at = now()
                WHERE campaign = $1 AND status IN ('pending', 'retrying', 'parked')
                RETURNING 1)
            UPDATE campaign_cancellations SET deliveries_cancelled = deliveries_cancelled + (SELECT count(*) FROM s)
            WHERE campaign = $1 AND resumed_at IS NULL
            RETURNING (SELECT count(*) FROM s) AS n
            """,
            [.text(campaign), .text(CampaignStops.cancelledReason), .text(open.stop.detail(campaign: campaign))])
        let count = Int(try swept.first?.int("n") ?? 0)
        var record = open
        record.deliveriesCancelled += count
        return Cancelled(record: record, isNew: !inserted.rows.isEmpty, deliveriesCancelled: count)
    }

    /// Resumes `campaign`: closes its open cancellation. Deliveries already
    /// `cancelled` stay so; what the workers take from now on is sent.
    /// Returns the cancellation it closed, nil when there was none.
    public static func resume(_ campaign: String, by: String, on connection: PostgresConnection) async throws -> Record? {
        let rows = try await connection.query(
            """
            UPDATE campaign_cancellations SET resumed_at = now(), resumed_by = $2
            WHERE campaign = $1 AND resumed_at IS NULL
            RETURNING \(columns)
            """, [.text(campaign), .text(by)])
        return try rows.first.flatMap(record(from:))
    }

    /// The campaign's cancellations, newest first.
    public static func history(_ campaign: String, on connection: PostgresConnection) async throws -> [Record] {
        let rows = try await connection.query(
            "SELECT \(columns) FROM campaign_cancellations WHERE campaign = $1 ORDER BY cancelled_at DESC, id DESC",
            [.text(campaign)])
        return try rows.rows.compactMap(record(from:))
    }

    /// The open cancellation of `campaign`, if any.
    static func record(_ campaign: String, on connection: PostgresConnection) async throws -> Record? {
        let rows = try await connection.query(
            "SELECT \(columns) FROM campaign_cancellations WHERE campaign = $1 AND resumed_at IS NULL", [.text(campaign)])
        return try rows.first.flatMap(record(from:))
    }

    private static let columns = "campaign, reason, cancelled_by, cancelled_at, deliveries_cancelled, resumed_at, resumed_by"

    private static func record(from row: PostgresRow) throws -> Record? {
        guard let campaign = row["campaign"], let by = row["cancelled_by"], let at = try row.date("cancelled_at") else { return nil }
        return Record(campaign: campaign, stop: CampaignStops.Stop(reason: row["reason"], by: by, at: at),
                      deliveriesCancelled: Int(try row.int("deliveries_cancelled") ?? 0),
                      resumedAt: try row.date("resumed_at"), resumedBy: row["resumed_by"])
    }
}
