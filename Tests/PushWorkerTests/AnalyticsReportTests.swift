import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// `pushfleet report`: the numbers from generated data, the tables, and the files.
final class AnalyticsReportTests: XCTestCase {
    func testReportNumbersTablesAndFiles() async throws {
        let db = try await AnalyticsDatabase.make()
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
        XCTAssertEqual(iosLine.split(separator: " ").map(String.init), ["com.example.shop", "ios", "500", "400", "200", "100", "0", "100", "0", "0", "0"])
        XCTAssertTrue(text.contains("BadDeviceToken") && text.contains("20.00 %"), text)
        let totalLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("total") })
        XCTAssertEqual(totalLine.split(separator: " ").map(String.init), ["total", "1000", "700", "300", "100", "100", "100", "0", "100", "0"])

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
