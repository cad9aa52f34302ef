import Foundation
import PushPostgres
import PushTestSupport
@testable import PushAnalytics

/// 1,000 deliveries in one hour with known outcomes (see `AnalyticsViewTests` for the expected counts):
/// status by i % 10: 0–3 accepted, 4–5 delivered, 6 opened, 7 invalid_token, 8 rejected, 9 dead_lettered;
/// even i → ios, odd i → android; enqueue → accepted latency (i % 97) ms; one attempt per delivery.
enum AnalyticsFixture {
    static let statuses = ["accepted", "accepted", "accepted", "accepted", "delivered", "delivered", "opened",
                           "invalid_token", "rejected", "dead_lettered"]

    /// Inserts the fixture; returns the start of its hour.
    static func seed(_ db: MigratedDatabase) async throws -> Date {
        let hour = ReportQueries.hourFloor(Date()).addingTimeInterval(-2 * 3600)
        try await db.connection.query(
            """
            INSERT INTO deliveries (notification_id, created_at, app, platform, token, status, attempts, provider_status,
                provider_reason, enqueued_at, first_attempt_at, last_attempt_at, accepted_at, delivered_at, opened_at, final_at)
            SELECT gen_random_uuid(), c, 'com.example.shop', CASE WHEN i % 2 = 0 THEN 'ios' ELSE 'android' END, 'tok' || i, s, 1,
                   CASE s WHEN 'invalid_token' THEN 410 WHEN 'rejected' THEN 400 WHEN 'dead_lettered' THEN 503 ELSE 200 END,
                   CASE s WHEN 'invalid_token' THEN 'Unregistered' WHEN 'rejected' THEN 'BadDeviceToken' WHEN 'dead_lettered' THEN 'UNAVAILABLE' END,
                   c, c, c,
                   CASE WHEN s IN ('accepted', 'delivered', 'opened') THEN c + (i % 97) * interval '1 ms' END,
                   CASE WHEN s IN ('delivered', 'opened') THEN c + interval '2 s' END,
                   CASE WHEN s = 'opened' THEN c + interval '3 s' END,
                   c + interval '1 s'
            FROM (SELECT i, $1::timestamptz + i * interval '3 s' AS c, ($2::text[])[i % 10 + 1] AS s
                  FROM generate_series(0, 999) AS i) g
            """, [.timestamp(hour), .textArray(statuses)])
        try await db.connection.query(
            """
            INSERT INTO delivery_attempt_log (notification_id, created_at, token, attempt, attempted_at, outcome, provider,
                provider_status, provider_reason, latency_ms)
            SELECT notification_id, created_at, token, 1, first_attempt_at,
                   CASE WHEN status IN ('accepted', 'delivered', 'opened') THEN 'accepted'
                        WHEN status = 'dead_lettered' THEN 'transient' ELSE status END,
                   CASE platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, provider_status, provider_reason,
                   (substr(token, 4)::int % 50) + 1
            FROM deliveries
            """)
        try await db.connection.query(
            """
            INSERT INTO devices (app, platform, token, registered_at, invalidated_at, invalid_reason) VALUES
              ('com.example.shop', 'ios', 'd1', $1::timestamptz - interval '30 days', $1, 'Unregistered'),
              ('com.example.shop', 'ios', 'd2', $1::timestamptz - interval '30 days', $1, 'Unregistered'),
              ('com.example.shop', 'android', 'd3', $1::timestamptz - interval '30 days', $1, 'UNREGISTERED'),
              ('com.example.shop', 'ios', 'd4', $1::timestamptz - interval '30 days', $1::timestamptz - interval '1 day', 'Unregistered'),
              ('com.example.shop', 'ios', 'd5', $1::timestamptz - interval '30 days', NULL, NULL)
            """, [.timestamp(hour)])
        return hour
    }

    /// PostgreSQL's percentile_cont.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let v = values.sorted()
        let pos = p * Double(v.count - 1)
        let lo = Int(pos.rounded(.down)), hi = Int(pos.rounded(.up))
        return v[lo] + (v[hi] - v[lo]) * (pos - Double(lo))
    }
}
