import Foundation
import Logging
import PushPostgres
import XCTest
@testable import PushAnalytics
@testable import PushWorker

/// A fresh schema per test with every migration applied, for the analytics
/// and receipt tests. Needs a real server: run via `scripts/with-postgres.sh`.
struct AnalyticsDatabase {
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "Analytics/Receipt tests need PostgreSQL: run them via `bash scripts/with-postgres.sh swift test --filter 'PushWorkerTests.Analytics|PushWorkerTests.Receipt'`"
        }
    }

    static let logger: Logger = {
        var logger = Logger(label: "pushfleet.analytics.tests")
        logger.logLevel = ProcessInfo.processInfo.environment["PUSHFLEET_TEST_LOG"] == nil ? .warning : .debug
        return logger
    }()

    static var migrationsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../schemas/postgres").standardized.path
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    }

    /// URL whose connections use `schema`.
    let url: String
    let schema: String
    let connection: PostgresConnection

    static func make() async throws -> AnalyticsDatabase {
        let env = ProcessInfo.processInfo.environment
        guard let base = env["PUSHFLEET_TEST_DATABASE_URL"] ?? env["PUSHFLEET_DATABASE_URL"], !base.isEmpty else {
            XCTFail(NotConfigured().description)
            throw NotConfigured()
        }
        let schema = "an_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let setup = try await PostgresConnection.connect(url: base, logger: logger)
        try await setup.execute("CREATE SCHEMA \(schema)")
        setup.close()
        let url = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        try await PostgresMigrator(connection: connection, logger: logger).migrate(directory: migrationsDirectory)
        return AnalyticsDatabase(url: url, schema: schema, connection: connection)
    }

    func pool(size: Int = 2) -> PostgresPool { PostgresPool(url: url, size: size, logger: Self.logger) }

    /// The one row of `sql` as column → text.
    func row(_ sql: String, _ binds: [PostgresValue] = []) async throws -> [String: String] {
        let rows = try await connection.query(sql, binds)
        guard let first = rows.first else { return [:] }
        var out: [String: String] = [:]
        for (i, name) in rows.columns.enumerated() { out[name] = first[i] }
        return out
    }
}

/// 1,000 deliveries in one hour with known outcomes (see `AnalyticsViewTests` for the expected counts):
/// status by i % 10: 0–3 accepted, 4–5 delivered, 6 opened, 7 invalid_token, 8 rejected, 9 dead_lettered;
/// even i → ios, odd i → android; enqueue → accepted latency (i % 97) ms; one attempt per delivery.
enum AnalyticsFixture {
    static let statuses = ["accepted", "accepted", "accepted", "accepted", "delivered", "delivered", "opened",
                           "invalid_token", "rejected", "dead_lettered"]

    /// Inserts the fixture; returns the start of its hour.
    static func seed(_ db: AnalyticsDatabase) async throws -> Date {
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
