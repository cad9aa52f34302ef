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

    /// The report is looked at the way people look at it, in a real
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
        XCTAssertEqual(data.latency.map { "\($0.platform) \($0.clock)" }, ["android created", "android enqueued", "ios created", "ios enqueued"])
        XCTAssertEqual(Set(data.rejections.map { "\($0.source):\($0.kind):\($0.count)" }), ["intake:not_json:1", "delivery:other:100"])
        let dir = NSTemporaryDirectory() + "pushfleet-report-browser-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        _ = try ReportRenderer.write(data, to: dir)
        let shot = try BrowserShot.take(dir + "/report.html", name: "report-screenshot.png", width: 1280, height: 2600)
        let dom = shot.dom
        for heading in ["Deliveries over time by status", "Funnel", "Top failure reasons", "Retries", "Latency to acceptance",
                        "Rejected messages and dead letters", "Replayed dead letters"] {
            XCTAssertTrue(dom.contains("<h2>\(heading)</h2>"), "the browser's DOM lacks \(heading)")
        }
        XCTAssertTrue(dom.contains("accepted, no receipt yet"), "the legend says what the accepted bars are")
        XCTAssertTrue(shot.colourReport.hasPrefix("size 1280x2600"), shot.colourReport)
        // Pixels of each series' colour (the stacked chart), the retry bars and the rejection bars reached the screen.
        for colour in ["#64b5f6", "#1e88e5", "#2e7d32", "#e53935", "#8e24aa", "#ffb300"] {
            XCTAssertGreaterThan(shot.pixels(colour), 200, "colour \(colour) is (almost) absent from the screenshot:\n\(shot.colourReport)")
        }
    }

    /// A receipt whose device clock is ahead would be plotted after the
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

    /// A replay (as `pushfleet dlq replay` leaves the ledger: the dead-lettered
    /// series in `delivery_replays`, the row reopened with a new series) does
    /// not take the dead letter out of the report: it is still counted, marked
    /// replayed, attempts are the replay's series, and the replays have a
    /// section and a line under the chart saying what came of them.
    func testReplayedDeadLettersStayInTheReportMarkedReplayed() async throws {
        let db = try await MigratedDatabase.make()
        let hour = try await AnalyticsFixture.seed(db)
        // Three of the fixture's dead letters (android, kind `other`) replayed: two accepted
        // on the replay's first try, one dead-lettered again after retries.
        try await db.connection.query(
            """
            INSERT INTO delivery_replays (notification_id, created_at, token, app, platform, replayed_at, replay_of,
                                          dead_lettered_at, attempts, first_attempt_at, provider_reason, detail)
            SELECT notification_id, created_at, token, app, platform, final_at + interval '1 h', 'push.dlq/0/' || substr(token, 4),
                   final_at, attempts, first_attempt_at, provider_reason, detail
            FROM deliveries WHERE token IN ('tok9', 'tok19', 'tok29')
            """)
        try await db.connection.query(
            """
            UPDATE deliveries SET replays = 1, replayed_at = final_at + interval '1 h', replay_of = 'push.dlq/0/' || substr(token, 4),
                   status = CASE token WHEN 'tok29' THEN 'dead_lettered' ELSE 'accepted' END,
                   attempts = CASE token WHEN 'tok29' THEN 3 ELSE 1 END,
                   first_attempt_at = final_at + interval '61 min', last_attempt_at = final_at + interval '62 min',
                   accepted_at = CASE WHEN token <> 'tok29' THEN final_at + interval '62 min' END,
                   detail = CASE token WHEN 'tok29' THEN 'retries exhausted after attempt 3: UNAVAILABLE' END,
                   final_at = final_at + interval '62 min'
            WHERE token IN ('tok9', 'tok19', 'tok29')
            """)
        let data = try await ReportQueries.load(on: db.connection, since: hour.addingTimeInterval(-60), app: nil)
        // Read through report.json, which carries every number of the report.
        let json = ReportRenderer.json(data)
        func objects(_ key: String) -> [JSONValue] { if case .array(let a)? = json[key] { a } else { [] } }
        func line(_ object: JSONValue, _ keys: [String]) -> String {
            keys.map { key in object[key].map { v in v.stringValue ?? v.numberValue.map { String(format: "%g", $0) } ?? "?" } ?? "∅" }
                .joined(separator: "|")
        }
        // 100 dead-lettered, 3 of them replayed since; 1 of those dead-lettered again (a second dead letter).
        XCTAssertEqual(Set(objects("rejections").map { line($0, ["source", "kind", "count", "replayed"]) }),
                       ["delivery|other|100|3", "delivery|exhausted|1|0"], "the replayed dead letters are still dead letters")
        XCTAssertEqual(objects("replays").map { line($0, ["app", "platform", "replayed", "recovered", "dead_lettered_again", "failed",
                                                          "in_progress", "attempts_before"]) },
                       ["com.example.shop|android|3|2|1|0|0|3"])
        XCTAssertEqual(objects("retries").map { line($0, ["attempts", "deliveries", "replayed"]) }, ["1|999|2", "3|1|1"],
                       "attempts of the replay's series")

        let text = ReportRenderer.text(data)
        XCTAssertTrue(text.contains("Replayed dead letters"), text)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let section = try XCTUnwrap(lines.firstIndex(of: "Replayed dead letters"), text)
        XCTAssertEqual(lines[section + 2].split(separator: " ").map(String.init),
                       ["app", "platform", "replayed", "recovered", "dead_lettered_again", "failed", "in_progress", "attempts_before"])
        let replayLine = lines[section + 4]
        XCTAssertEqual(replayLine.split(separator: " ").map(String.init), ["com.example.shop", "android", "3", "2", "1", "0", "0", "3"])
        XCTAssertTrue(ReportRenderer.chartCaption(data).contains("3 dead-lettered deliveries were replayed: 2 recovered, 1 dead-lettered again"),
                      ReportRenderer.chartCaption(data))
        let html = ReportRenderer.html(data, svg: ReportRenderer.svg(data.series))
        XCTAssertTrue(html.contains("<h2>Replayed dead letters</h2>"))
        XCTAssertTrue(html.contains("delivery: other (3 replayed)"), "the dead-letter chart says which were replayed")
    }

    /// The report's words and table cells: every provider named, the failure
    /// share's denominator said, reason codes (Push Kit's are digits) as text,
    /// and the HTML funnel's total row like the terminal's.
    func testTheReportNamesEveryProviderAndReadsLikeTheTerminal() {
        var web = FunnelRow(app: "com.example.news", platform: "web")
        web.enqueued = 10; web.accepted = 8; web.invalidToken = 2
        var huawei = FunnelRow(app: "com.example.news", platform: "huawei")
        huawei.enqueued = 5; huawei.accepted = 4; huawei.rejected = 1
        let data = ReportData(generatedAt: Date(), since: Date(), app: nil, funnel: [huawei, web],
                              failures: [FailureRow(app: "com.example.news", platform: "huawei", status: "rejected", reason: "80300007",
                                                    deliveries: 1, share: 0.2),
                                         FailureRow(app: "com.example.news", platform: "web", status: "invalid_token", reason: "Gone",
                                                    deliveries: 2, share: 0.2)],
                              series: StatusSeries(bucketSeconds: 60, buckets: [], series: []))
        let html = ReportRenderer.html(data, svg: ReportRenderer.svg(data.series))
        XCTAssertTrue(html.contains("APNs, FCM, Web Push or Push Kit"), "the funnel's note names every provider")
        XCTAssertFalse(html.contains("APNs/FCM"))
        XCTAssertTrue(html.contains("<td>80300007</td>"), "a reason code is text, left-aligned, even when it is digits")
        XCTAssertTrue(html.contains("<td class=\"n\">20.00 %</td>"), "a share is a number")
        XCTAssertTrue(html.contains("<tr><td>total</td><td></td><td class=\"n\">15</td><td class=\"n\">12</td>"),
                      "the HTML funnel has the terminal's total row")
        let text = ReportRenderer.text(data)
        for page in [text, html] {
            XCTAssertTrue(page.contains("share: of all the deliveries of that app and platform"), "the share's denominator is said")
        }
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
