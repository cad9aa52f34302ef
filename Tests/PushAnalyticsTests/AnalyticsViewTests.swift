import Foundation
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushAnalytics

/// The analysts' views on generated data, with exact expected numbers.
final class AnalyticsViewTests: XCTestCase {
    func testFunnelFailuresLatencyAndTokenViews() async throws {
        let db = try await MigratedDatabase.make()
        let hour = try await AnalyticsFixture.seed(db)

        let funnel = try await db.connection.query(
            "SELECT * FROM delivery_funnel_hourly WHERE hour >= $1 ORDER BY platform", [.timestamp(hour)])
        XCTAssertEqual(funnel.count, 2)
        func line(_ platform: String) throws -> [String: String] {
            let row = try XCTUnwrap(funnel.rows.first { $0["platform"] == platform })
            var out: [String: String] = [:]
            for (i, c) in funnel.columns.enumerated() { out[c] = row[i] }
            return out
        }
        let ios = try line("ios"), android = try line("android")
        XCTAssertEqual(try funnel.rows[0].date("hour"), hour)
        // even i: statuses 0,2 accepted, 4 delivered, 6 opened, 8 rejected (100 each of 0..999 per residue)
        XCTAssertEqual(ios["enqueued"], "500")
        XCTAssertEqual(ios["accepted"], "400", "delivered and opened rows count as accepted")
        XCTAssertEqual(ios["delivered"], "200", "opened rows count as delivered")
        XCTAssertEqual(ios["opened"], "100")
        XCTAssertEqual(ios["rejected"], "100")
        XCTAssertEqual(ios["invalid_token"], "0")
        // odd i: 1,3 accepted, 5 delivered, 7 invalid_token, 9 dead_lettered
        XCTAssertEqual(android["enqueued"], "500")
        XCTAssertEqual(android["accepted"], "300")
        XCTAssertEqual(android["delivered"], "100")
        XCTAssertEqual(android["opened"], "0")
        XCTAssertEqual(android["invalid_token"], "100")
        XCTAssertEqual(android["dead_lettered"], "100")
        XCTAssertEqual(android["in_progress"], "0")

        let failures = try await db.connection.query(
            "SELECT platform, status, reason, deliveries, share_of_deliveries FROM delivery_failure_reasons_daily ORDER BY platform, status")
        XCTAssertEqual(failures.rows.map { "\($0["platform"] ?? "∅")|\($0["status"] ?? "∅")|\($0["reason"] ?? "∅")|\($0["deliveries"] ?? "∅")|\($0["share_of_deliveries"] ?? "∅")" }, [
            "android|dead_lettered|UNAVAILABLE|100|0.200000",
            "android|invalid_token|Unregistered|100|0.200000",
            "ios|rejected|BadDeviceToken|100|0.200000",
        ])

        let attempts = try await db.connection.query(
            "SELECT provider, outcome, attempts, share_of_attempts FROM attempt_error_rates_daily WHERE provider = 'apns' ORDER BY outcome")
        XCTAssertEqual(attempts.rows.map { "\($0["outcome"] ?? "∅")|\($0["attempts"] ?? "∅")|\($0["share_of_attempts"] ?? "∅")" },
                       ["accepted|400|0.800000", "rejected|100|0.200000"])

        // Latency: (i % 97) ms for the accepted/delivered/opened rows of each platform.
        let latency = try await db.connection.query("SELECT platform, accepted, p50_ms, p90_ms, p99_ms FROM delivery_latency_hourly ORDER BY platform")
        for row in latency.rows {
            let even = row["platform"] == "ios"
            var values: [Double] = []
            for i in 0..<1000 where (i % 2 == 0) == even && i % 10 <= 6 { values.append(Double(i % 97)) }
            XCTAssertEqual(row["accepted"], String(values.count))
            let percentiles: [(String, Double)] = [("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99)]
            for (column, p) in percentiles {
                XCTAssertEqual(try XCTUnwrap(try row.double(column)), AnalyticsFixture.percentile(values, p), accuracy: 0.001, column)
            }
        }
        // Attempt latency (token number % 50) + 1 ms: apns (even) 1, 3 … 49, fcm (odd) 2, 4 … 50.
        let attemptLatency = try await db.connection.query("SELECT provider, attempts, p50_ms FROM attempt_latency_hourly ORDER BY provider")
        XCTAssertEqual(attemptLatency.rows.map { "\($0["provider"] ?? "∅")|\($0["attempts"] ?? "∅")|\($0["p50_ms"] ?? "∅")" }, ["apns|500|25", "fcm|500|26"])

        let tokens = try await db.connection.query(
            "SELECT platform, reason, tokens FROM tokens_invalidated_daily WHERE day = $1 ORDER BY platform",
            [.timestamp(Date(timeIntervalSince1970: (hour.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400))])
        XCTAssertEqual(tokens.rows.map { "\($0["platform"] ?? "∅")|\($0["reason"] ?? "∅")|\($0["tokens"] ?? "∅")" },
                       ["android|UNREGISTERED|1", "ios|Unregistered|2"])
    }

    /// Two clocks end at acceptance, and each view is named for where it
    /// starts: `created_at` (the producer's clock) or `enqueued_at` (the
    /// Kafka timestamp of the intake message). `delivery_latency_hourly`, the
    /// name queries were written against, stays the enqueued one.
    func testEachAcceptanceClockHasAViewNamedForIt() async throws {
        let db = try await MigratedDatabase.make()
        let hour = ReportQueries.hourFloor(Date()).addingTimeInterval(-3600)
        // Created on the hour, enqueued (i + 10) s later, accepted 2 s after that.
        try await db.connection.query(
            """
            INSERT INTO deliveries (notification_id, created_at, app, platform, token, status, attempts, enqueued_at,
                                    first_attempt_at, last_attempt_at, accepted_at, final_at)
            SELECT gen_random_uuid(), $1, 'app', 'ios', 't' || i, 'accepted', 1, e, e, e, e + interval '2 s', e + interval '2 s'
            FROM (SELECT i, $1::timestamptz + (i + 10) * interval '1 s' AS e FROM generate_series(0, 9) AS i) g
            """, [.timestamp(hour)])
        let created = try await db.row("SELECT accepted, p50_ms, p99_ms FROM delivery_created_to_accepted_hourly WHERE hour = $1", [.timestamp(hour)])
        let enqueued = try await db.row("SELECT accepted, p50_ms, p99_ms FROM delivery_enqueued_to_accepted_hourly WHERE hour = $1", [.timestamp(hour)])
        let old = try await db.row("SELECT accepted, p50_ms, p99_ms FROM delivery_latency_hourly WHERE hour = $1", [.timestamp(hour)])
        XCTAssertEqual(created["accepted"], "10")
        XCTAssertEqual(Double(created["p50_ms"] ?? ""), 16_500, "created → accepted: 12 … 21 s")
        XCTAssertEqual(Double(enqueued["p50_ms"] ?? ""), 2_000, "enqueued → accepted: 2 s each")
        XCTAssertEqual(Double(enqueued["p99_ms"] ?? ""), 2_000)
        XCTAssertEqual(old, enqueued, "the old name is the enqueued clock")
    }

    /// The hourly views' hour filters are answered from the BRIN over those
    /// hours (migrations 0014, 0015), not by reading every row of every partition.
    func testHourFiltersReadTheirHoursThroughTheBRIN() async throws {
        let db = try await MigratedDatabase.make()
        _ = try await AnalyticsFixture.seed(db)
        try await db.connection.query("VACUUM ANALYZE deliveries")
        try await db.connection.query("SET enable_seqscan = off")
        for (view, hour) in [("delivery_funnel_hourly", "created_at"), ("delivery_latency_hourly", "created_at"),
                             ("delivery_created_to_accepted_hourly", "created_at"), ("delivery_enqueued_to_accepted_hourly", "created_at"),
                             ("delivery_accepted_hourly", "accepted_at")] {
            let plan = try await db.connection.query(
                "EXPLAIN SELECT * FROM \(view) WHERE hour >= now() - interval '3 hours'")
            let text = plan.rows.compactMap { $0[0] }.joined(separator: "\n")
            // Partition indexes are named after their columns: created_at, first_attempt_at, (timezone(...)), ...
            XCTAssertTrue(text.contains("Bitmap Index Scan on deliveries_") && text.contains("created_at_first_attempt_at"),
                          "\(view):\n\(text)")
            XCTAssertTrue(text.contains("Index Cond: (date_bin('01:00:00'::interval, \(hour), "), "\(view):\n\(text)")
            XCTAssertFalse(text.contains("Seq Scan on deliveries_2"), "\(view) reads a day partition whole:\n\(text)")
        }
        // The attempts' hours (the log's btree) and the invalidated tokens' days (the registry's) likewise.
        let attempts = try await db.connection.query(
            "EXPLAIN SELECT * FROM attempt_latency_hourly WHERE hour >= now() - interval '3 hours'")
        let attemptsPlan = attempts.rows.compactMap { $0[0] }.joined(separator: "\n")
        XCTAssertTrue(attemptsPlan.contains("Index Cond: (date_bin('01:00:00'::interval, attempted_at, "), attemptsPlan)
        XCTAssertTrue(attemptsPlan.contains("Index Cond: (date_bin('01:00:00'::interval, first_attempt_at, "), attemptsPlan)
        let tokens = try await db.connection.query(
            "EXPLAIN SELECT * FROM tokens_invalidated_daily WHERE day >= now() - interval '2 days'")
        let tokensPlan = tokens.rows.compactMap { $0[0] }.joined(separator: "\n")
        XCTAssertTrue(tokensPlan.contains("devices_invalidated_utc_day_idx"), tokensPlan)
        XCTAssertTrue(tokensPlan.contains("Index Cond: (date_bin('1 day'::interval, invalidated_at, "), tokensPlan)
    }

    /// Migration 0015 buckets by `date_bin` from 2000-01-01 UTC: the views'
    /// hours and days must be the UTC hours and days they were, at the last
    /// microsecond of a day, exactly on the hour, before the origin and before
    /// 1970, whatever the session's time zone (here one half an hour off UTC).
    func testViewsBucketByTheUTCHourAndDay() async throws {
        let db = try await MigratedDatabase.make()
        try await db.connection.query("SET TIME ZONE 'Asia/Kolkata'")
        let times: [Date] = [
            1_795_651_200,        // 2026-11-26 00:00:00 UTC, on the hour and the day
            1_795_651_199.999999, // the microsecond before
            1_795_699_800,        // 13:30 UTC: 19:00 in Kolkata, a whole local hour
            1_774_747_800,        // 2026-03-29 01:30 UTC, inside Europe's DST change
            946_683_000,          // 1999-12-31 23:30 UTC, half an hour before the origin
            -14_182_940,          // 1969-07-20 20:17:40 UTC
        ].map { Date(timeIntervalSince1970: $0) }
        try await db.connection.query(
            """
            INSERT INTO deliveries (notification_id, created_at, app, platform, token, status, attempts, enqueued_at,
                                    first_attempt_at, last_attempt_at, accepted_at, final_at, first_attempt_latency_ms)
            SELECT gen_random_uuid(), c, 'app', 'ios', 't' || i, 'accepted', 1, c, c, c, c, c, 1
            FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(c, i)
            """, [.timestampArray(times)])
        func floored(_ date: Date, _ seconds: Double) -> Date {
            Date(timeIntervalSince1970: (date.timeIntervalSince1970 / seconds).rounded(.down) * seconds)
        }
        func buckets(_ sql: String, _ column: String) async throws -> [Date: Int] {
            var out: [Date: Int] = [:]
            for row in try await db.connection.query(sql).rows {
                out[try XCTUnwrap(try row.date(column)), default: 0] += Int(try XCTUnwrap(try row.int("n")))
            }
            return out
        }
        let hours = Dictionary(times.map { (floored($0, 3_600), 1) }, uniquingKeysWith: +)
        let days = Dictionary(times.map { (floored($0, 86_400), 1) }, uniquingKeysWith: +)
        XCTAssertEqual(hours.count, 6, "the microsecond before midnight is in the hour before")
        XCTAssertEqual(days.count, 5, "and in the day before")
        let views: [(sql: String, column: String, expected: [Date: Int])] = [
            ("SELECT hour, enqueued AS n FROM delivery_funnel_hourly", "hour", hours),
            ("SELECT hour, accepted AS n FROM delivery_latency_hourly", "hour", hours),
            ("SELECT hour, accepted AS n FROM delivery_created_to_accepted_hourly", "hour", hours),
            ("SELECT hour, accepted AS n FROM delivery_enqueued_to_accepted_hourly", "hour", hours),
            ("SELECT hour, accepted AS n FROM delivery_accepted_hourly", "hour", hours),
            ("SELECT hour, attempts AS n FROM attempt_latency_hourly", "hour", hours),
            ("SELECT day, deliveries AS n FROM delivery_retries_daily", "day", days),
            ("SELECT day, attempts AS n FROM retry_attempts_daily", "day", days),
            ("SELECT day, attempts AS n FROM attempt_error_rates_daily", "day", days),
        ]
        for view in views {
            let found = try await buckets(view.sql, view.column)
            XCTAssertEqual(found, view.expected, view.sql)
        }
        // And what the old expression gives, row by row, in this session's time zone.
        let differing = try await db.row(
            """
            SELECT count(*) AS n FROM deliveries
            WHERE date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
                  IS DISTINCT FROM date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               OR date_bin('1 day', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
                  IS DISTINCT FROM date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
            """)
        XCTAssertEqual(differing["n"], "0")
    }
}
