import Foundation
import PushCore

extension ReportRenderer {
    /// A self-contained HTML page: inline CSS, the SVG chart inline, the
    /// report's tables (aligned as the terminal's: `TableShape`) with what
    /// each counts. No scripts, no external fonts or files.
    public static func html(_ data: ReportData, svg: String) -> String {
        func table(_ shape: TableShape, _ rows: [[String]], class name: String) -> String {
            var out = "<table class=\"\(name)\">\n<tr>" + shape.header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
            for row in rows {
                // Numbers right-aligned, text (names, statuses, reason codes even of digits) left-aligned.
                out += "<tr>" + row.enumerated().map { i, v in
                    shape.text.contains(i) ? "<td>\(escape(v))</td>" : "<td class=\"n\">\(escape(v))</td>"
                }.joined() + "</tr>\n"
            }
            return out + "</table>"
        }
        let funnel = table(funnelShape, funnelCells(data.funnel), class: "funnel")
        let failures = table(failureShape, data.failures.map(failureCells), class: "failures")
        let retries = table(retryShape, data.retries.map(retryCells), class: "retries")
        let latency = table(latencyShape, data.latency.map(latencyCells), class: "latency")
        let rejections = table(rejectionShape, data.rejections.map { rejectionCells($0, exampleLength: 120) }, class: "rejections")
        let replays = data.replays.isEmpty ? "<p>None in this window.</p>" : table(replayShape, data.replays.map(replayCells), class: "replays")
        let retryChart = barChart(data.retries.map { (label: "\($0.attempts) attempt\($0.attempts == 1 ? "" : "s")", value: $0.deliveries) },
                                  title: "Final deliveries by attempts needed", color: "#ffb300")
        let rejectionChart = barChart(data.rejections.map { r in
            (label: "\(r.source): \(r.kind)\(r.replayed > 0 ? " (\(r.replayed) replayed)" : "")", value: r.count)
        }, title: "Rejected messages and dead letters by kind", color: "#e53935")
        let scope = data.app.map { " — \(escape($0))" } ?? ""
        return page(title: "PushFleet report" + (data.app.map { " — \($0)" } ?? ""), body: """
            <h1>PushFleet delivery report\(scope)</h1>
            <p>Deliveries created since \(escape(Timestamps.format(data.since))); generated \(escape(Timestamps.format(data.generatedAt))).</p>
            <h2>Deliveries over time by status</h2>
            \(svg)
            <p class="note caption">\(escape(chartCaption(data)))</p>
            <h2>Funnel</h2>
            <p class="note">accepted: the provider (APNs, FCM, Web Push or Push Kit) took the notification. delivered/opened: the app on the device sent a receipt. Accepted is not delivered.</p>
            \(funnel)
            <h2>Top failure reasons</h2>
            \(failures)
            <p class="note">\(escape(shareCaption))</p>
            <h2>Retries</h2>
            \(retryChart)
            \(retries)
            <p class="note">\(escape(retriesCaption))</p>
            <h2>Latency to acceptance</h2>
            \(latency)
            <p class="note">\(escape(latencyCaption))</p>
            <h2>Rejected messages and dead letters</h2>
            \(rejectionChart)
            \(rejections)
            <h2>Replayed dead letters</h2>
            \(replays)
            <p class="note">\(escape(replaysCaption))</p>
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
                         ("dead_lettered", int(r.deadLettered)), ("avg_seconds_retrying", .double(r.averageSecondsRetrying)),
                         ("replayed", int(r.replayed))])
            })),
            ("latency_ms", .array(data.latency.map { r in
                .object([("app", .string(r.app)), ("platform", .string(r.platform)), ("from", .string(r.clock.rawValue)),
                         ("accepted", int(r.accepted)), ("p50", .double(r.p50)), ("p90", .double(r.p90)), ("p99", .double(r.p99))])
            })),
            ("rejections", .array(data.rejections.map { r in
                .object([("source", .string(r.source)), ("kind", .string(r.kind)), ("count", int(r.count)), ("replayed", int(r.replayed)),
                         ("example", .string(r.example))])
            })),
            ("replays", .array(data.replays.map { r in
                .object([("app", .string(r.app)), ("platform", .string(r.platform)), ("replayed", int(r.replayed)),
                         ("recovered", int(r.recovered)), ("dead_lettered_again", int(r.deadLetteredAgain)), ("failed", int(r.failed)),
                         ("in_progress", int(r.inProgress)), ("attempts_before", int(r.attemptsBefore))])
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
