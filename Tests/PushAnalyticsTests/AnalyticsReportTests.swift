import Foundation
import PushCore
import PushTestSupport
import XCTest
@testable import PushAnalytics

/// `pushfleet report`: the numbers from generated data, the tables, and the files.
final class AnalyticsReportTests: XCTestCase {
    func testReportNumbersTablesAndFiles() async throws {
        let db = try await MigratedDatabase.make()
        let hour = try await AnalyticsFixture.seed(db)
        let data = try await ReportQueries.load(on: db.connection, since: hour.addingTimeInterval(-60), app: nil)
        XCTAssertEqual(data.since, hour.addingTimeInterval(-3600))

        var ios = FunnelRow(app: "com.example.shop", platform: "ios")
        ios.enqueued = 500; ios.accepted = 400; ios.delivered = 200; ios.opened = 100; ios.rejected = 100
        var android = FunnelRow(app: "com.example.shop", platform: "android")
        android.enqueued = 500; android.accepted = 300; android.delivered = 100; android.invalidToken = 100; android.deadLettered = 100
        XCTAssertEqual(data.funnel, [android, ios])
        XCTAssertEqual(data.failures.map { "\($0.platform)|\($0.status)|\($0.reason)|\($0.deliveries)" }.sorted(),
                       ["android|dead_lettered|UNAVAILABLE|100", "android|invalid_token|Unregistered|100", "ios|rejected|BadDeviceToken|100"])
        XCTAssertEqual(data.failures.map(\.share), [0.2, 0.2, 0.2])

        // Series: one per status present, every status's total equals its row count.
        XCTAssertEqual(data.series.series.map(\.status), ["accepted", "delivered", "opened", "invalid_token", "rejected", "dead_lettered"])
        let totals = Dictionary(uniqueKeysWithValues: data.series.series.map { ($0.status, $0.counts.reduce(0, +)) })
        XCTAssertEqual(totals, ["accepted": 400, "delivered": 200, "opened": 100, "invalid_token": 100, "rejected": 100, "dead_lettered": 100])
        // Status times span 1 … 2998 s after the hour (last final_at = 2997 + 1): 120 s buckets, 25 of them.
        XCTAssertEqual(data.series.bucketSeconds, 120)
        XCTAssertEqual(data.series.buckets.count, 25)

        let text = ReportRenderer.text(data)
        XCTAssertTrue(text.contains("com.example.shop  ios"), text)
        let iosLine = try XCTUnwrap(text.split(separator: "\n").first { $0.contains(" ios ") && $0.hasPrefix("com.example.shop") })
        XCTAssertEqual(iosLine.split(separator: " ").map(String.init), ["com.example.shop", "ios", "500", "400", "200", "100", "0", "100", "0", "0", "0", "0"])
        XCTAssertTrue(text.contains("BadDeviceToken") && text.contains("20.00 %"), text)
        let totalLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("total") })
        XCTAssertEqual(totalLine.split(separator: " ").map(String.init), ["total", "1000", "700", "300", "100", "100", "100", "0", "100", "0", "0"])

        let dir = NSTemporaryDirectory() + "pushfleet-report-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try ReportRenderer.write(data, to: dir)
        XCTAssertEqual(paths.map { ($0 as NSString).lastPathComponent }, ["report.html", "deliveries.svg", "report.json"])
        let svg = try String(contentsOfFile: dir + "/deliveries.svg", encoding: .utf8)
        let html = try String(contentsOfFile: dir + "/report.html", encoding: .utf8)
        let json = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/report.json"))))
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        for entry in data.series.series {
            let group = try XCTUnwrap(Self.group(svg, status: entry.status), entry.status)
            XCTAssertEqual(group.components(separatedBy: "<rect ").count - 1, 25, "one bar per bucket for \(entry.status)")
        }
        XCTAssertEqual(svg.components(separatedBy: "<g class=\"series\"").count - 1, 6)
        XCTAssertTrue(html.contains(svg), "the HTML embeds the same chart")
        XCTAssertFalse(html.contains("<script") || html.contains("http://fonts") || html.contains("<link"), "self-contained")
        XCTAssertTrue(html.contains("<td>BadDeviceToken</td>"))
        XCTAssertEqual(json["funnel"].flatMap { if case .array(let a) = $0 { a.count } else { nil } }, 2)
        guard case .object(let statuses)? = json["series"]?["statuses"], case .array(let opened)? = statuses.first(where: { $0.key == "opened" })?.value
        else { return XCTFail("report.json has no series") }
        XCTAssertEqual(opened.count, 25)
    }

    /// Issue 17: the report is looked at the way people look at it, in a real
    /// browser. Headless Chromium (Debian's) renders report.html to a PNG
    /// through `scripts/report-screenshot.sh`; the PNG must carry the chart's
    /// status colours and the bar charts', and the DOM Chromium built must hold
    /// every section. The screenshot is kept as .build/report-screenshot.png.
    func testTheHTMLReportRendersInARealBrowser() async throws {
        let db = try await MigratedDatabase.make()
        let hour = try await AnalyticsFixture.seed(db)
        try await db.connection.query(
            "INSERT INTO intake_rejections (kind, reason, kafka_topic, kafka_partition, kafka_offset) VALUES ('not_json', '$: not JSON', 'push.notifications', 0, 1)")
        let data = try await ReportQueries.load(on: db.connection, since: hour.addingTimeInterval(-60), app: nil)
        XCTAssertEqual(data.retries.map(\.attempts), [1])
        XCTAssertEqual(data.retries.first?.deliveries, 1000)
        XCTAssertEqual(data.latency.count, 2)
        XCTAssertEqual(Set(data.rejections.map { "\($0.source):\($0.kind):\($0.count)" }), ["intake:not_json:1", "delivery:other:100"])
        let dir = NSTemporaryDirectory() + "pushfleet-report-browser-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        _ = try ReportRenderer.write(data, to: dir)
        let shot = try BrowserShot.take(dir + "/report.html", name: "report-screenshot.png", width: 1280, height: 2600)
        let dom = shot.dom
        for heading in ["Deliveries over time by status", "Funnel", "Top failure reasons", "Retries", "Latency, created → accepted",
                        "Rejected messages and dead letters"] {
            XCTAssertTrue(dom.contains("<h2>\(heading)</h2>"), "the browser's DOM lacks \(heading)")
        }
        XCTAssertTrue(dom.contains("accepted, no receipt yet"), "the legend says what the accepted bars are")
        XCTAssertTrue(shot.colourReport.hasPrefix("size 1280x2600"), shot.colourReport)
        // Pixels of each series' colour (the stacked chart), the retry bars and the rejection bars reached the screen.
        for colour in ["#64b5f6", "#1e88e5", "#2e7d32", "#e53935", "#8e24aa", "#ffb300"] {
            XCTAssertGreaterThan(shot.pixels(colour), 200, "colour \(colour) is (almost) absent from the screenshot:\n\(shot.colourReport)")
        }
    }

    /// Issue 17: a receipt whose device clock is ahead was plotted after the
    /// report's own time. It is drawn at the report's time and counted.
    func testReceiptTimesInTheFutureAreDrawnAtTheReportsTime() async throws {
        let db = try await MigratedDatabase.make()
        let hour = try await AnalyticsFixture.seed(db)
        // Device clocks ahead, written straight into the ledger (the receipt-merge
        // trigger would keep the earliest receipt time; it is not what is under test).
        try await db.connection.query("SET session_replication_role = replica")
        let moved = try await db.connection.query(
            "UPDATE deliveries SET opened_at = now() + interval '2 days' WHERE status = 'opened' AND token IN ('tok6', 'tok16', 'tok26')")
        try await db.connection.query("SET session_replication_role = DEFAULT")
        XCTAssertEqual(moved.affectedRows, 3)
        let now = Date()
        let data = try await ReportQueries.load(on: db.connection, since: hour.addingTimeInterval(-60), app: nil, now: now)
        XCTAssertEqual(data.futureReceipts, 3)
        let lastBucket = try XCTUnwrap(data.series.buckets.last)
        XCTAssertLessThanOrEqual(lastBucket.timeIntervalSince1970, now.timeIntervalSince1970, "no bar after the report's time")
        let opened = data.series.series.first { $0.status == "opened" }?.counts.reduce(0, +)
        XCTAssertEqual(opened, 100, "still counted, at the report's time")
        XCTAssertTrue(ReportRenderer.text(data).contains("3 receipt(s) carry a device time after this report's time"))
        XCTAssertTrue(ReportRenderer.chartCaption(data).contains("3 receipt(s)"))
    }

    func testRendererHandlesEmptyAndSingleBucket() {
        let series = StatusSeries(bucketSeconds: 1, buckets: [Date(timeIntervalSince1970: 0)], series: [("accepted", [3])])
        let svg = ReportRenderer.svg(series)
        XCTAssertEqual(Self.group(svg, status: "accepted")?.components(separatedBy: "<rect ").count, 2)
        let empty = ReportData(generatedAt: Date(), since: Date(), app: "x<y", funnel: [], failures: [],
                               series: StatusSeries(bucketSeconds: 60, buckets: [], series: []))
        XCTAssertTrue(ReportRenderer.text(empty).contains("(no deliveries)"))
        XCTAssertTrue(ReportRenderer.html(empty, svg: ReportRenderer.svg(empty.series)).contains("x&lt;y"))
        XCTAssertEqual(StatusSeries.bucketSeconds(span: 0), 1)
        XCTAssertEqual(StatusSeries.bucketSeconds(span: 86_400), 1800)
    }

    static func group(_ svg: String, status: String) -> String? {
        guard let start = svg.range(of: "<g class=\"series\" data-status=\"\(status)\"") else { return nil }
        guard let end = svg.range(of: "</g>", range: start.upperBound..<svg.endIndex) else { return nil }
        return String(svg[start.lowerBound..<end.lowerBound])
    }
}
