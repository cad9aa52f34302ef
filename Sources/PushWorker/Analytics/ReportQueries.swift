import Foundation
import PushCore
import PushPostgres

/// The queries behind `pushfleet report` and the demo's funnel table.
public enum ReportQueries {
    static let failureStatuses = ["invalid_token", "rejected", "expired", "dead_lettered"]

    /// Start of the hour containing `date` (the hourly views' resolution).
    public static func hourFloor(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    }

    /// Everything the report shows, for deliveries created since `since` (rounded down to the hour).
    public static func load(on connection: PostgresConnection, since: Date, app: String?, now: Date = Date()) async throws -> ReportData {
        let start = hourFloor(since)
        let funnel = try await self.funnel(on: connection, since: start, app: app)
        let failures = try await self.failures(on: connection, since: start, app: app, funnel: funnel)
        let series = try await self.series(on: connection, since: start, app: app)
        return ReportData(generatedAt: now, since: start, app: app, funnel: funnel, failures: failures, series: series)
    }

    /// The funnel per app × platform, summed from `delivery_funnel_hourly`.
    public static func funnel(on connection: PostgresConnection, since: Date, app: String?) async throws -> [FunnelRow] {
        let rows = try await connection.query(
            """
            SELECT app, platform, sum(enqueued) AS enqueued, sum(accepted) AS accepted, sum(delivered) AS delivered,
                   sum(opened) AS opened, sum(invalid_token) AS invalid_token, sum(rejected) AS rejected,
                   sum(expired) AS expired, sum(dead_lettered) AS dead_lettered, sum(in_progress) AS in_progress
            FROM delivery_funnel_hourly
            WHERE hour >= $1 AND ($2::text IS NULL OR app = $2::text)
            GROUP BY app, platform
            ORDER BY app, platform
            """, [.timestamp(hourFloor(since)), app.map(PostgresValue.text) ?? .null])
        return try rows.rows.map { r in
            var row = FunnelRow(app: r["app"] ?? "", platform: r["platform"] ?? "")
            func n(_ c: String) throws -> Int { Int(try r.int(c) ?? 0) }
            row.enqueued = try n("enqueued")
            row.accepted = try n("accepted")
            row.delivered = try n("delivered")
            row.opened = try n("opened")
            row.invalidToken = try n("invalid_token")
            row.rejected = try n("rejected")
            row.expired = try n("expired")
            row.deadLettered = try n("dead_lettered")
            row.inProgress = try n("in_progress")
            return row
        }
    }

    /// The most frequent (status, provider reason) among failed deliveries.
    public static func failures(on connection: PostgresConnection, since: Date, app: String?, funnel: [FunnelRow],
                                limit: Int = 10) async throws -> [FailureRow] {
        let rows = try await connection.query(
            """
            SELECT app, platform, status, COALESCE(provider_reason, '') AS reason, count(*) AS n
            FROM deliveries
            WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text) AND status = ANY($3::text[])
            GROUP BY 1, 2, 3, 4
            ORDER BY n DESC, app, platform, status, reason
            LIMIT $4
            """, [.timestamp(since), app.map(PostgresValue.text) ?? .null, .textArray(failureStatuses), .int(Int64(limit))])
        var totals: [String: Int] = [:]
        for f in funnel { totals[f.app + "|" + f.platform] = f.enqueued }
        return try rows.rows.map { r in
            let app = r["app"] ?? "", platform = r["platform"] ?? ""
            let n = Int(try r.int("n") ?? 0)
            let total = totals[app + "|" + platform] ?? 0
            return FailureRow(app: app, platform: platform, status: r["status"] ?? "", reason: r["reason"] ?? "",
                              deliveries: n, share: total > 0 ? Double(n) / Double(total) : 0)
        }
    }

    /// Deliveries per bucket by status, bucketed by when each reached its status.
    public static func series(on connection: PostgresConnection, since: Date, app: String?, maxBuckets: Int = 48) async throws -> StatusSeries {
        let binds: [PostgresValue] = [.timestamp(since), app.map(PostgresValue.text) ?? .null]
        let reached = """
            CASE status WHEN 'opened' THEN opened_at WHEN 'delivered' THEN COALESCE(delivered_at, final_at)
                        ELSE COALESCE(final_at, last_attempt_at, updated_at) END
            """
        let range = try await connection.query(
            """
            SELECT extract(epoch FROM min(\(reached)))::float8 AS lo, extract(epoch FROM max(\(reached)))::float8 AS hi
            FROM deliveries WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
            """, binds)
        guard let lo = try range.first?.double("lo"), let hi = try range.first?.double("hi") else {
            return StatusSeries(bucketSeconds: 60, buckets: [], series: [])
        }
        let width = StatusSeries.bucketSeconds(span: hi - lo, target: maxBuckets)
        let rows = try await connection.query(
            """
            SELECT floor(extract(epoch FROM \(reached)) / $3)::bigint AS b, status, count(*) AS n
            FROM deliveries WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
            GROUP BY 1, 2
            """, binds + [.int(Int64(width))])
        let first = Int64((lo / Double(width)).rounded(.down))
        let last = Int64((hi / Double(width)).rounded(.down))
        let count = Int(last - first + 1)
        var byStatus: [String: [Int]] = [:]
        for r in rows.rows {
            guard let b = try r.int("b"), let status = r["status"] else { continue }
            let i = Int(b - first)
            guard i >= 0, i < count else { continue }
            byStatus[status, default: Array(repeating: 0, count: count)][i] += Int(try r.int("n") ?? 0)
        }
        let order = DeliveryStatus.allCases.map(\.rawValue)
        let series = order.compactMap { s in byStatus[s].map { (status: s, counts: $0) } }
        let buckets = (0..<count).map { Date(timeIntervalSince1970: TimeInterval((first + Int64($0)) * Int64(width))) }
        return StatusSeries(bucketSeconds: width, buckets: buckets, series: series)
    }
}
