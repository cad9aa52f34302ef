import Foundation
import PushCore

extension ReportRenderer {
    /// A self-contained HTML page: inline CSS, the SVG chart inline, the
    /// funnel and failure tables. No scripts, no external fonts or files.
    public static func html(_ data: ReportData, svg: String) -> String {
        func cells(_ values: [String], tag: String = "td") -> String { tableRow(values, tag: tag) }
        var funnel = cells(["app", "platform"] + FunnelRow(app: "", platform: "").columns.map(\.name), tag: "th")
        for r in data.funnel { funnel += cells([r.app, r.platform] + r.columns.map { String($0.value) }) }
        var failures = cells(["app", "platform", "status", "reason", "deliveries", "share"], tag: "th")
        for r in data.failures {
            failures += cells([r.app, r.platform, r.status, r.reason.isEmpty ? "-" : r.reason, String(r.deliveries), percent(r.share)])
        }
        var retries = cells(["attempts", "deliveries", "accepted", "dead_lettered", "avg_s_retrying"], tag: "th")
        for r in data.retries {
            retries += cells([String(r.attempts), String(r.deliveries), String(r.accepted), String(r.deadLettered),
                              String(format: "%.1f", r.averageSecondsRetrying)])
        }
        var latency = cells(["app", "platform", "accepted", "p50_ms", "p90_ms", "p99_ms"], tag: "th")
        for r in data.latency {
            latency += cells([r.app, r.platform, String(r.accepted), String(format: "%.0f", r.p50), String(format: "%.0f", r.p90),
                              String(format: "%.0f", r.p99)])
        }
        var rejections = cells(["source", "kind", "count", "example"], tag: "th")
        for r in data.rejections { rejections += cells([r.source, r.kind, String(r.count), String(r.example.prefix(120))]) }
        let retryChart = barChart(data.retries.map { (label: "\($0.attempts) attempt\($0.attempts == 1 ? "" : "s")", value: $0.deliveries) },
                                  title: "Final deliveries by attempts needed", color: "#ffb300")
        let rejectionChart = barChart(data.rejections.map { (label: "\($0.source): \($0.kind)", value: $0.count) },
                                      title: "Rejected messages and dead letters by kind", color: "#e53935")
        let scope = data.app.map { " — \(escape($0))" } ?? ""
        return page(title: "PushFleet report" + (data.app.map { " — \($0)" } ?? ""), body: """
            <h1>PushFleet delivery report\(scope)</h1>
            <p>Deliveries created since \(escape(Timestamps.format(data.since))); generated \(escape(Timestamps.format(data.generatedAt))).</p>
            <h2>Deliveries over time by status</h2>
            \(svg)
            <p class="note caption">\(escape(chartCaption(data)))</p>
            <h2>Funnel</h2>
            <p class="note">accepted: the provider (APNs/FCM) took the notification. delivered/opened: the app on the device sent a receipt. Accepted is not delivered.</p>
            <table class="funnel">
            \(funnel)</table>
            <h2>Top failure reasons</h2>
            <table class="failures">
            \(failures)</table>
            <h2>Retries</h2>
            \(retryChart)
            <table class="retries">
            \(retries)</table>
            <h2>Latency, created → accepted</h2>
            <table class="latency">
            \(latency)</table>
            <h2>Rejected messages and dead letters</h2>
            \(rejectionChart)
            <table class="rejections">
            \(rejections)</table>
            """)
    }

    /// One table row: numbers (and percentages) right-aligned, text left-aligned.
    static func tableRow(_ values: [String], tag: String = "td") -> String {
        "<tr>" + values.map { v in
            let numeric = tag == "td" && (Double(v) != nil || (v.hasSuffix(" %") && Double(v.dropLast(2)) != nil))
            return numeric ? "<td class=\"n\">\(escape(v))</td>" : "<\(tag)>\(escape(v))</\(tag)>"
        }.joined() + "</tr>\n"
    }

    /// A self-contained page around `body` (HTML): the reports' one style
    /// sheet plus `style`, no scripts, no external fonts or files. `title` is text.
    static func page(title: String, style: String = "", body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(escape(title))</title>
        <style>
        body { font-family: sans-serif; margin: 2em; color: #212121; }
        table { border-collapse: collapse; margin: 1em 0 2em; font-size: 13px; }
        th, td { border: 1px solid #e0e0e0; padding: 4px 10px; text-align: left; }
        th { background: #f5f5f5; }
        td.n { text-align: right; font-variant-numeric: tabular-nums; }
        p.note { color: #616161; max-width: 60em; }
        \(style)</style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// The report's numbers as JSON.
    public static func json(_ data: ReportData) -> JSONValue {
        func int(_ v: Int) -> JSONValue { .int(Int64(v)) }
        return .object([
            ("generated_at", .string(Timestamps.format(data.generatedAt))),
            ("since", .string(Timestamps.format(data.since))),
            ("app", data.app.map(JSONValue.string) ?? .null),
            ("funnel", .array(data.funnel.map(funnelJSON))),
            ("failures", .array(data.failures.map { r in
                .object([("app", .string(r.app)), ("platform", .string(r.platform)), ("status", .string(r.status)),
                         ("reason", .string(r.reason)), ("deliveries", int(r.deliveries)), ("share", .double(r.share))])
            })),
            ("retries", .array(data.retries.map { r in
                .object([("attempts", int(r.attempts)), ("deliveries", int(r.deliveries)), ("accepted", int(r.accepted)),
                         ("dead_lettered", int(r.deadLettered)), ("avg_seconds_retrying", .double(r.averageSecondsRetrying))])
            })),
            ("latency_ms", .array(data.latency.map { r in
                .object([("app", .string(r.app)), ("platform", .string(r.platform)), ("accepted", int(r.accepted)),
                         ("p50", .double(r.p50)), ("p90", .double(r.p90)), ("p99", .double(r.p99))])
            })),
            ("rejections", .array(data.rejections.map { r in
                .object([("source", .string(r.source)), ("kind", .string(r.kind)), ("count", int(r.count)), ("example", .string(r.example))])
            })),
            ("future_receipts", int(data.futureReceipts)),
            ("series", .object([
                ("bucket_seconds", int(data.series.bucketSeconds)),
                ("buckets", .array(data.series.buckets.map { .string(Timestamps.format($0)) })),
                ("statuses", .object(data.series.series.map { ($0.status, .array($0.counts.map(int))) })),
            ])),
        ])
    }

    /// One funnel row as a JSON object.
    public static func funnelJSON(_ r: FunnelRow) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [(key: "app", value: .string(r.app)), (key: "platform", value: .string(r.platform))]
        for c in r.columns { members.append((key: c.name, value: .int(Int64(c.value)))) }
        return .object(members)
    }

    /// Writes report.html, deliveries.svg and report.json into `directory`; returns their paths.
    public static func write(_ data: ReportData, to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let chart = svg(data.series)
        let files: [(String, [UInt8])] = [
            ("report.html", Array(html(data, svg: chart).utf8)),
            ("deliveries.svg", Array(chart.utf8)),
            ("report.json", json(data).encoded()),
        ]
        var paths: [String] = []
        for (name, bytes) in files {
            let path = (directory as NSString).appendingPathComponent(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            paths.append(path)
        }
        return paths
    }
}
