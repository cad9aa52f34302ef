import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushAnalytics

/// The campaign views and what `campaign status`, `campaign list` and
/// `report --campaign` read from them, on generated rows with known outcomes.
final class CampaignAnalyticsTests: XCTestCase {
    /// 100 deliveries of `spring` (i % 10: 0-4 accepted, 5 delivered, 6 opened,
    /// 7 invalid_token, 8 cancelled, 9 retrying; even i ios, odd android;
    /// created → accepted i seconds), 10 of `autumn`, 10 without a campaign.
    static func seed(_ db: MigratedDatabase, now: Date) async throws {
        try await db.connection.query(
            """
            INSERT INTO deliveries (notification_id, created_at, app, platform, token, status, attempts, campaign,
                first_attempt_at, last_attempt_at, accepted_at, delivered_at, opened_at, final_at)
            SELECT gen_random_uuid(), $1::timestamptz, 'com.example.shop', CASE WHEN i % 2 = 0 THEN 'ios' ELSE 'android' END,
                   'tok' || i, s, CASE WHEN s = 'cancelled' THEN 0 ELSE 1 END, c,
                   CASE WHEN s <> 'cancelled' THEN $1::timestamptz + i * interval '1 s' END,
                   CASE WHEN s <> 'cancelled' THEN $1::timestamptz + i * interval '1 s' END,
                   CASE WHEN s IN ('accepted', 'delivered', 'opened') THEN $1::timestamptz + i * interval '1 s' END,
                   CASE WHEN s IN ('delivered', 'opened') THEN $1::timestamptz + i * interval '1 s' END,
                   CASE WHEN s = 'opened' THEN $1::timestamptz + i * interval '1 s' END,
                   CASE WHEN s <> 'retrying' THEN $2::timestamptz END
            FROM (SELECT i, ($3::text[])[i % 10 + 1] AS s,
                         CASE WHEN i < 100 THEN 'spring' WHEN i < 110 THEN 'autumn' END AS c
                  FROM generate_series(0, 119) AS i) g
            """,
            [.timestamp(now.addingTimeInterval(-600)), .timestamp(now.addingTimeInterval(-10)),
             .textArray(["accepted", "accepted", "accepted", "accepted", "accepted", "delivered", "opened", "invalid_token",
                         "cancelled", "retrying"])])
        try await db.connection.query(
            """
            INSERT INTO campaign_cancellations (campaign, reason, cancelled_by, cancelled_at, deliveries_cancelled)
            VALUES ('spring', 'wrong text', 'ops', $1, 10)
            """, [.timestamp(now.addingTimeInterval(-5))])
    }

    func testTheCampaignFunnelStatusListAndReport() async throws {
        let db = try await MigratedDatabase.make()
        let now = Date()
        try await Self.seed(db, now: now)

        let funnel = try await CampaignQueries.funnel("spring", on: db.connection)
        XCTAssertEqual(funnel.map(\.platform), ["android", "ios"])
        let t = CampaignFunnelRow.total(of: funnel, campaign: "spring")
        XCTAssertEqual(t.columns.map(\.value), [100, 70, 20, 10, 10, 0, 0, 0, 10, 10],
                       "deliveries, accepted (with delivered, opened), delivered, opened, invalid, rejected, expired, dead, cancelled, in progress")
        // ios: even i; its accepted rows are i % 10 in 0, 2, 4, 6 → latencies 0, 2, 4, 6, 10, 12, … seconds.
        let iosAccepted = (0..<100).filter { $0 % 2 == 0 && [0, 2, 4, 6].contains($0 % 10) }.map(Double.init)
        XCTAssertEqual(funnel[1].p50Seconds ?? -1, Self.percentile(iosAccepted, 0.5), accuracy: 0.001)
        XCTAssertEqual(funnel[1].p99Seconds ?? -1, Self.percentile(iosAccepted, 0.99), accuracy: 0.001)
        XCTAssertEqual(t.firstSend?.timeIntervalSince1970 ?? 0, now.addingTimeInterval(-600).timeIntervalSince1970, accuracy: 0.001)
        XCTAssertEqual(t.lastSend?.timeIntervalSince1970 ?? 0, now.addingTimeInterval(-600 + 99).timeIntervalSince1970, accuracy: 0.001)
        let untagged = try await db.row("SELECT count(*) AS n FROM campaign_funnel WHERE campaign IS NULL")
        XCTAssertEqual(untagged["n"], "0", "rows without a campaign are not in the campaign funnel")

        let status = try await CampaignQueries.status("spring", on: db.connection, window: 60, now: now)
        XCTAssertEqual(status.sent, 90, "every row but the cancelled ones had a request")
        XCTAssertEqual(status.finalInWindow, 90, "final 10 s ago: inside the window")
        XCTAssertEqual(status.sentInWindow, 0, "last requests 501-600 s ago")
        XCTAssertEqual(status.inFlight, 10)
        XCTAssertTrue(status.isCancelled)
        XCTAssertEqual(status.cancellation?.by, "ops")
        XCTAssertNil(status.secondsToFinish, "a cancelled campaign has no time to finish")

        var running = status
        running.cancellation = nil
        running.bulkBacklog = 35
        XCTAssertEqual(running.secondsToFinish ?? 0, 45 / 1.5, accuracy: 0.001, "(10 in flight + 35 waiting) at 90 per minute")

        let text = CampaignRenderer.text(status)
        XCTAssertTrue(text.hasPrefix("Campaign spring: CANCELLED by ops at "), text)
        XCTAssertTrue(text.contains("(wrong text)"), text)
        let cancelledLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("cancelled ") })
        XCTAssertEqual(cancelledLine.split(separator: " ").last, "10")
        let json = CampaignRenderer.json(status)
        XCTAssertEqual(json["ledger_deliveries"], .int(100))
        XCTAssertEqual(json["sent"], .int(90))
        XCTAssertEqual(json["cancelled_deliveries"], .int(10))
        XCTAssertEqual(json["in_flight"], .int(10))
        XCTAssertEqual(json["cancelled"], .bool(true))
        XCTAssertEqual(json["bulk_lane_backlog_messages"], .null)
        XCTAssertEqual(json["cancellation"]?["reason"], .string("wrong text"))

        let list = try await CampaignQueries.list(since: now.addingTimeInterval(-3600), on: db.connection)
        XCTAssertEqual(list.map(\.campaign).sorted(), ["autumn", "spring"])
        XCTAssertEqual(list.first { $0.campaign == "spring" }?.isCancelled, true)
        XCTAssertEqual(list.first { $0.campaign == "autumn" }?.deliveries, 10)
        XCTAssertTrue(CampaignRenderer.listTable(list).contains("cancelled"))

        let dir = NSTemporaryDirectory() + "pushfleet-campaign-report-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertEqual(try CampaignRenderer.write(status, to: dir).map { ($0 as NSString).lastPathComponent }, ["campaign.html", "campaign.json"])
        let html = try String(contentsOfFile: dir + "/campaign.html", encoding: .utf8)
        XCTAssertTrue(html.contains("<h1>Campaign spring</h1>"))
        XCTAssertTrue(html.contains("Cancelled by ops"))
        XCTAssertTrue(html.contains("fill=\"#ff7043\""), "the cancelled bar in its colour")
        XCTAssertEqual(html.components(separatedBy: "<tr>").count - 1, 15, "platforms; ten counts, p50, p99, first and last send")
        XCTAssertTrue(html.contains("<tr><th></th><th>android</th><th>ios</th><th>total</th></tr>"), html)
        XCTAssertTrue(html.contains("<tr><td>cancelled</td><td class=\"n\">0</td><td class=\"n\">10</td><td class=\"n\">10</td></tr>"), html)
    }

    /// `report --campaign`'s page as people see it: headless Chromium renders
    /// campaign.html (`scripts/report-screenshot.sh`); the DOM it built holds
    /// the title, the cancellation and the funnel, and the screenshot (kept as
    /// .build/campaign-report-screenshot.png) carries the chart's colours.
    func testTheCampaignReportRendersInARealBrowser() async throws {
        let db = try await MigratedDatabase.make()
        let now = Date()
        try await Self.seed(db, now: now)
        let status = try await CampaignQueries.status("spring", on: db.connection, window: 60, now: now)
        let dir = NSTemporaryDirectory() + "pushfleet-campaign-browser-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        _ = try CampaignRenderer.write(status, to: dir)
        let shot = try BrowserShot.take(dir + "/campaign.html", name: "campaign-report-screenshot.png", width: 1280, height: 1100)
        for text in ["<h1>Campaign spring</h1>", "<h2>Funnel by platform</h2>", "Cancelled by ops", "wrong text"] {
            XCTAssertTrue(shot.dom.contains(text), "the browser's DOM lacks \(text)")
        }
        XCTAssertTrue(shot.colourReport.hasPrefix("size 1280x1100"), shot.colourReport)
        // accepted, delivered, opened, invalid_token, cancelled and in-progress bars reached the screen.
        for colour in ["#64b5f6", "#1e88e5", "#2e7d32", "#8e24aa", "#ff7043", "#90a4ae"] {
            XCTAssertGreaterThan(shot.pixels(colour), 200, "colour \(colour) is (almost) absent from the screenshot:\n\(shot.colourReport)")
        }
    }

    func testTheFleetFunnelCountsCancelledApart() async throws {
        let db = try await MigratedDatabase.make()
        try await Self.seed(db, now: Date())
        let row = try await db.row("SELECT sum(cancelled) AS c, sum(in_progress) AS p, sum(enqueued) AS n FROM delivery_funnel_hourly")
        XCTAssertEqual(row["c"], "12", "cancelled rows of every campaign and none, apart from in_progress")
        XCTAssertEqual(row["p"], "12", "retrying rows of every campaign and none")
        XCTAssertEqual(row["n"], "120")
    }

    /// Devices not seen for 30 days are stale, for 270 removable (unless
    /// invalidated since); the function takes other limits.
    func testStaleDevicesByAppAndPlatform() async throws {
        let db = try await MigratedDatabase.make()
        try await db.connection.query(
            """
            INSERT INTO devices (app, platform, token, registered_at, last_seen_at, invalidated_at, invalid_reason) VALUES
              ('a', 'ios', 'fresh', now() - interval '1 day', now() - interval '1 day', NULL, NULL),
              ('a', 'ios', 'month', now() - interval '40 days', now() - interval '40 days', NULL, NULL),
              ('a', 'ios', 'old', now() - interval '300 days', now() - interval '300 days', NULL, NULL),
              ('a', 'ios', 'old-dead', now() - interval '300 days', now() - interval '300 days', now() - interval '280 days', 'Unregistered'),
              ('a', 'ios', 'old-dead-recently', now() - interval '300 days', now() - interval '300 days', now() - interval '2 days', 'Unregistered'),
              ('a', 'android', 'month', now() - interval '31 days', now() - interval '31 days', NULL, NULL)
            """)
        let rows = try await db.connection.query("SELECT * FROM stale_devices ORDER BY platform").rows
        XCTAssertEqual(rows.map { "\($0["platform"] ?? "")|\($0["valid_devices"] ?? "")|\($0["stale"] ?? "")|\($0["removable"] ?? "")" },
                       ["android|1|1|0", "ios|3|2|2"])
        let custom = try await db.row("SELECT stale, removable FROM pushfleet_stale_devices(interval '50 days', interval '299 days') WHERE platform = 'ios'")
        XCTAssertEqual(custom["stale"], "1")
        XCTAssertEqual(custom["removable"], "1", "old-dead was invalidated 280 days ago: inside 299")
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double { AnalyticsFixture.percentile(values, p) }
}
