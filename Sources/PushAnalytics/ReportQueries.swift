import Foundation
import PushCore
import PushPostgres

/// The queries behind `pushfleet report` and the demo's funnel table.
public enum ReportQueries {
    static let failureStatuses = ["invalid_token", "rejected", "expired", "dead_lettered", "cancelled"]

    /// Start of the hour containing `date` (the hourly views' resolution).
    public static func hourFloor(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    }

    /// Everything the report shows, for deliveries created since `since` (rounded down to the hour).
    public static func load(on connection: PostgresConnection, since: Date, app: String?, now: Date = Date()) async throws -> ReportData {
        let start = hourFloor(since)
        let funnel = try await self.funnel(on: connection, since: start, app: app)
        let failures = try await self.failures(on: connection, since: start, app: app, funnel: funnel)
        let (series, future) = try await self.series(on: connection, since: start, app: app, now: now)
        return ReportData(generatedAt: now, since: start, app: app, funnel: funnel, failures: failures, series: series,
                          retries: try await retries(on: connection, since: start, app: app),
                          latency: try await latency(on: connection, since: start, app: app),
                          rejections: try await rejections(on: connection, since: start, app: app),
                          futureReceipts: future, replays: try await replays(on: connection, since: start, app: app))
    }

    /// Final deliveries by the number of attempts their last series needed (a
    /// replay starts a new series: migration 0017).
    public static func retries(on connection: PostgresConnection, since: Date, app: String?) async throws -> [RetryRow] {
        let rows = try await connection.query(
            """
            SELECT attempts AS a, count(*) AS n,
                   count(*) FILTER (WHERE status IN ('accepted', 'delivered', 'opened')) AS ok,
                   count(*) FILTER (WHERE status = 'dead_lettered') AS dl,
                   COALESCE(avg(extract(epoch FROM last_attempt_at - first_attempt_at)), 0)::float8 AS s,
                   count(*) FILTER (WHERE replays > 0) AS rp
            FROM deliveries
            WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
              AND status NOT IN ('pending', 'retrying', 'parked') AND attempts > 0
            GROUP BY 1 ORDER BY 1
            """, [.timestamp(since), app.map(PostgresValue.text) ?? .null])
        return try rows.rows.map { r in
            RetryRow(attempts: Int(try r.int("a") ?? 0), deliveries: Int(try r.int("n") ?? 0), accepted: Int(try r.int("ok") ?? 0),
                     deadLettered: Int(try r.int("dl") ?? 0), averageSecondsRetrying: try r.double("s") ?? 0,
                     replayed: Int(try r.int("rp") ?? 0))
        }
    }

    /// created → accepted and enqueued → accepted percentiles (ms) per app × platform:
    /// the two clocks of `delivery_created_to_accepted_hourly` and
    /// `delivery_enqueued_to_accepted_hourly`, over the whole window.
    public static func latency(on connection: PostgresConnection, since: Date, app: String?) async throws -> [LatencyRow] {
        func percentile(_ p: String, from start: String) -> String {
            "percentile_cont(\(p)) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - \(start))) * 1000"
        }
        // Percentiles skip the NULLs: enqueued_at is NULL when the Kafka timestamp was missing or implausible.
        let rows = try await connection.query(
            """
            SELECT app, platform, count(*) AS n, \(percentile("0.5", from: "created_at")) AS p50,
                   \(percentile("0.9", from: "created_at")) AS p90, \(percentile("0.99", from: "created_at")) AS p99,
                   count(enqueued_at) AS en, \(percentile("0.5", from: "enqueued_at")) AS ep50,
                   \(percentile("0.9", from: "enqueued_at")) AS ep90, \(percentile("0.99", from: "enqueued_at")) AS ep99
            FROM deliveries
            WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text) AND accepted_at IS NOT NULL
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.timestamp(since), app.map(PostgresValue.text) ?? .null])
        var out: [LatencyRow] = []
        for r in rows.rows {
            let app = r["app"] ?? "", platform = r["platform"] ?? ""
            out.append(LatencyRow(app: app, platform: platform, clock: .created, accepted: Int(try r.int("n") ?? 0),
                                  p50: try r.double("p50") ?? 0, p90: try r.double("p90") ?? 0, p99: try r.double("p99") ?? 0))
            let enqueued = Int(try r.int("en") ?? 0)
            guard enqueued > 0 else { continue }
            out.append(LatencyRow(app: app, platform: platform, clock: .enqueued, accepted: enqueued,
                                  p50: try r.double("ep50") ?? 0, p90: try r.double("ep90") ?? 0, p99: try r.double("ep99") ?? 0))
        }
        return out
    }

    /// Intake rejections and dead-lettered deliveries by kind, most frequent
    /// first: a delivery's dead letter counts whether or not it was replayed
    /// since (the dead-lettered series a replay reopened is in
    /// `delivery_replays`), and `replayed` says how many were.
    public static func rejections(on connection: PostgresConnection, since: Date, app: String?, limit: Int = 15) async throws -> [RejectionRow] {
        let rows = try await connection.query(
            """
            SELECT source, kind, n, replayed, example FROM (
                SELECT 'intake' AS source, kind, count(*) AS n, 0::bigint AS replayed, min(reason) AS example
                FROM intake_rejections
                WHERE received_at >= $1 AND ($2::text IS NULL OR app = $2::text)
                GROUP BY 2
                UNION ALL
                SELECT 'delivery', pushfleet_dead_letter_kind(provider_reason, detail),
                       count(*), count(*) FILTER (WHERE replayed), min(COALESCE(detail, provider_reason, ''))
                FROM (
                    SELECT provider_reason, detail, false AS replayed FROM deliveries
                    WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text) AND status = 'dead_lettered'
                    UNION ALL
                    SELECT provider_reason, detail, true FROM delivery_replays
                    WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
                ) d
                GROUP BY 2
            ) x
            ORDER BY n DESC, source, kind
            LIMIT $3
            """, [.timestamp(since), app.map(PostgresValue.text) ?? .null, .int(Int64(limit))])
        return try rows.rows.map { r in
            RejectionRow(source: r["source"] ?? "", kind: r["kind"] ?? "", count: Int(try r.int("n") ?? 0),
                         replayed: Int(try r.int("replayed") ?? 0), example: r["example"] ?? "")
        }
    }

    /// What came of the replays of the window's deliveries, per app × platform
    /// (from `delivery_replay_outcomes`).
    public static func replays(on connection: PostgresConnection, since: Date, app: String?) async throws -> [ReplayRow] {
        let rows = try await connection.query(
            """
            SELECT app, platform, count(*) AS n,
                   count(*) FILTER (WHERE result = 'recovered') AS recovered,
                   count(*) FILTER (WHERE result = 'dead_lettered_again') AS again,
                   count(*) FILTER (WHERE result = 'failed') AS failed,
                   count(*) FILTER (WHERE result = 'in_progress') AS in_progress,
                   COALESCE(sum(attempts_before), 0) AS before
            FROM delivery_replay_outcomes
            WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.timestamp(since), app.map(PostgresValue.text) ?? .null])
        return try rows.rows.map { r in
            func n(_ c: String) throws -> Int { Int(try r.int(c) ?? 0) }
            return ReplayRow(app: r["app"] ?? "", platform: r["platform"] ?? "", replayed: try n("n"), recovered: try n("recovered"),
                             deadLetteredAgain: try n("again"), failed: try n("failed"), inProgress: try n("in_progress"),
                             attemptsBefore: try n("before"))
        }
    }

    /// The funnel per app × platform, summed from `delivery_funnel_hourly`.
    public static func funnel(on connection: PostgresConnection, since: Date, app: String?) async throws -> [FunnelRow] {
        let rows = try await connection.query(
            """
            SELECT app, platform, sum(enqueued) AS enqueued, sum(accepted) AS accepted, sum(delivered) AS delivered,
                   sum(opened) AS opened, sum(invalid_token) AS invalid_token, sum(rejected) AS rejected,
                   sum(expired) AS expired, sum(dead_lettered) AS dead_lettered, sum(in_progress) AS in_progress,
                   sum(cancelled) AS cancelled
            FROM delivery_funnel_hourly
            WHERE hour >= $1 AND ($2::text IS NULL OR app = $2::text)
            GROUP BY app, platform
            ORDER BY app, platform
            """, [.timestamp(hourFloor(since)), app.map(PostgresValue.text) ?? .null])
        return try rows.rows.map { r in
            var row = FunnelRow(app: r["app"] ?? "", platform: r["platform"] ?? "")
            row.enqueued = Int(try r.int("enqueued") ?? 0)
            row.counts = try FunnelCounts(r)
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

    /// Deliveries per bucket by status, bucketed by when each reached its
    /// status; a receipt time after `now` (a device clock ahead) is drawn at
    /// `now` and counted in the second value.
    public static func series(on connection: PostgresConnection, since: Date, app: String?, now: Date = Date(),
                              maxBuckets: Int = 48) async throws -> (StatusSeries, Int) {
        let binds: [PostgresValue] = [.timestamp(since), app.map(PostgresValue.text) ?? .null, .timestamp(now)]
        let raw = """
            CASE status WHEN 'opened' THEN opened_at WHEN 'delivered' THEN COALESCE(delivered_at, final_at)
                        ELSE COALESCE(final_at, last_attempt_at, updated_at) END
            """
        let reached = "LEAST(\(raw), $3::timestamptz)"
        // One pass for the time range and the count of receipt times ahead of `now`.
        let range = try await connection.query(
            """
            SELECT extract(epoch FROM min(\(reached)))::float8 AS lo, extract(epoch FROM max(\(reached)))::float8 AS hi,
                   count(*) FILTER (WHERE \(raw) > $3::timestamptz) AS future
            FROM deliveries WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
            """, binds)
        let futureCount = Int(try range.first?.int("future") ?? 0)
        guard let lo = try range.first?.double("lo"), let hi = try range.first?.double("hi") else {
            return (StatusSeries(bucketSeconds: 60, buckets: [], series: []), futureCount)
        }
        let width = StatusSeries.bucketSeconds(span: hi - lo, target: maxBuckets)
        let rows = try await connection.query(
            """
            SELECT floor(extract(epoch FROM \(reached)) / $4)::bigint AS b, status, count(*) AS n
            FROM deliveries WHERE created_at >= $1 AND ($2::text IS NULL OR app = $2::text)
            GROUP BY 1, 2
            """, binds + [.int(Int64(width))])
        // Epoch seconds from PostgreSQL's timestamptz range (years 4713 BC … 294276 AD) always fit;
        // anything else (NaN, an infinite timestamp) gives an empty chart rather than a trap.
        guard let first = Int64(exactly: (lo / Double(width)).rounded(.down)),
              let last = Int64(exactly: (hi / Double(width)).rounded(.down)), last >= first, last - first < 100_000
        else { return (StatusSeries(bucketSeconds: width, buckets: [], series: []), futureCount) }
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
        return (StatusSeries(bucketSeconds: width, buckets: buckets, series: series), futureCount)
    }
}

extension FunnelCounts {
    /// The counts of a funnel view's row, by the views' column names (NULL: 0).
    init(_ r: PostgresRow) throws {
        func n(_ column: String) throws -> Int { Int(try r.int(column) ?? 0) }
        self.init()
        accepted = try n("accepted")
        delivered = try n("delivered")
        opened = try n("opened")
        invalidToken = try n("invalid_token")
        rejected = try n("rejected")
        expired = try n("expired")
        deadLettered = try n("dead_lettered")
        cancelled = try n("cancelled")
        inProgress = try n("in_progress")
    }
}
