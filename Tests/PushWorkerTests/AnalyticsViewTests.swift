import Foundation
import PushPostgres
import XCTest
@testable import PushAnalytics
@testable import PushWorker

/// The analysts' views on generated data, with exact expected numbers.
final class AnalyticsViewTests: XCTestCase {
    func testFunnelFailuresLatencyAndTokenViews() async throws {
        let db = try await AnalyticsDatabase.make()
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

    /// The hourly views' hour filters are answered from the BRIN over those
    /// hours (migration 0014), not by reading every row of every partition.
    func testHourFiltersReadTheirHoursThroughTheBRIN() async throws {
        let db = try await AnalyticsDatabase.make()
        _ = try await AnalyticsFixture.seed(db)
        try await db.connection.query("VACUUM ANALYZE deliveries")
        try await db.connection.query("SET enable_seqscan = off")
        for (view, hour) in [("delivery_funnel_hourly", "created_at"), ("delivery_latency_hourly", "created_at"),
                             ("delivery_accepted_hourly", "accepted_at")] {
            let plan = try await db.connection.query(
                "EXPLAIN SELECT * FROM \(view) WHERE hour >= now() - interval '3 hours'")
            let text = plan.rows.compactMap { $0[0] }.joined(separator: "\n")
            // Partition indexes are named after their columns: created_at, first_attempt_at, (timezone(...)), ...
            XCTAssertTrue(text.contains("Bitmap Index Scan on deliveries_") && text.contains("created_at_first_attempt_at"),
                          "\(view):\n\(text)")
            XCTAssertTrue(text.contains("Index Cond: ((date_trunc('hour'::text, (\(hour) AT TIME ZONE"), "\(view):\n\(text)")
            XCTAssertFalse(text.contains("Seq Scan on deliveries_2"), "\(view) reads a day partition whole:\n\(text)")
        }
    }
}
