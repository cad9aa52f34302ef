import Foundation
import PushCore

/// Turns report rows into text: terminal tables, SVG, HTML and JSON. Pure.
public enum ReportRenderer {
    /// An aligned text table: first column left-aligned, the others right-aligned.
    public static func table(header: [String], rows: [[String]], leftColumns: Int = 1) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                return i < leftColumns ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        var out = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        out += rows.map(line)
        return out.joined(separator: "\n") + "\n"
    }

    /// The funnel per app × platform, with a total line when there are several.
    public static func funnelTable(_ rows: [FunnelRow]) -> String {
        var lines = rows.map { r in [r.app, r.platform] + r.columns.map { String($0.value) } }
        if rows.count > 1 {
            var total = FunnelRow(app: "total", platform: "")
            for r in rows {
                total.enqueued += r.enqueued
                total.counts.add(r.counts)
            }
            lines.append([total.app, total.platform] + total.columns.map { String($0.value) })
        }
        let header = ["app", "platform"] + FunnelRow(app: "", platform: "").columns.map(\.name)
        return table(header: header, rows: lines, leftColumns: 2)
    }

    /// Top failure reasons.
    public static func failuresTable(_ rows: [FailureRow]) -> String {
        table(header: ["app", "platform", "status", "reason", "deliveries", "share"],
              rows: rows.map { [$0.app, $0.platform, $0.status, $0.reason.isEmpty ? "-" : $0.reason,
                                String($0.deliveries), percent($0.share)] },
              leftColumns: 4)
    }

    /// Final deliveries by attempts needed.
    public static func retriesTable(_ rows: [RetryRow]) -> String {
        table(header: ["attempts", "deliveries", "accepted", "dead_lettered", "avg_s_retrying"],
              rows: rows.map { [String($0.attempts), String($0.deliveries), String($0.accepted), String($0.deadLettered),
                                String(format: "%.1f", $0.averageSecondsRetrying)] })
    }

    /// created → accepted percentiles.
    public static func latencyTable(_ rows: [LatencyRow]) -> String {
        table(header: ["app", "platform", "accepted", "p50_ms", "p90_ms", "p99_ms"],
              rows: rows.map { [$0.app, $0.platform, String($0.accepted), String(format: "%.0f", $0.p50),
                                String(format: "%.0f", $0.p90), String(format: "%.0f", $0.p99)] },
              leftColumns: 2)
    }

    /// Rejected messages and dead letters by kind.
    public static func rejectionsTable(_ rows: [RejectionRow]) -> String {
        table(header: ["source", "kind", "count", "example"],
              rows: rows.map { [$0.source, $0.kind, String($0.count), String($0.example.prefix(80))] }, leftColumns: 2)
    }

    /// The whole terminal report.
    public static func text(_ data: ReportData) -> String {
        var out = "Delivery funnel since \(Timestamps.format(data.since))\(data.app.map { " for \($0)" } ?? "")\n\n"
        out += data.funnel.isEmpty ? "(no deliveries)\n" : funnelTable(data.funnel)
        out += "\nTop failure reasons\n\n"
        out += data.failures.isEmpty ? "(no failures)\n" : failuresTable(data.failures)
        out += "\nAttempts per final delivery\n\n"
        out += data.retries.isEmpty ? "(none final yet)\n" : retriesTable(data.retries)
        out += "\nLatency, created → accepted\n\n"
        out += data.latency.isEmpty ? "(nothing accepted)\n" : latencyTable(data.latency)
        out += "\nRejected messages and dead letters\n\n"
        out += data.rejections.isEmpty ? "(none)\n" : rejectionsTable(data.rejections)
        if data.futureReceipts > 0 {
            out += "\n\(data.futureReceipts) receipt(s) carry a device time after this report's time (device clocks ahead); the chart shows them at the report's time.\n"
        }
        return out
    }

    /// What a status means in the chart's legend: each delivery is counted
    /// once, at its current status, so the bars say what the funnel's
    /// cumulative columns include.
    static func legendLabel(_ status: String) -> String {
        switch status {
        case "accepted": "accepted, no receipt yet"
        case "delivered": "delivered, not opened"
        default: status
        }
    }

    /// The caption that ties the chart to the funnel.
    static func chartCaption(_ data: ReportData) -> String {
        func total(_ status: String) -> Int { data.series.series.first { $0.status == status }?.counts.reduce(0, +) ?? 0 }
        let a = total("accepted"), d = total("delivered"), o = total("opened")
        let funnelAccepted = data.funnel.reduce(0) { $0 + $1.accepted }
        var text = "Each delivery is counted once, at its current status and when it reached it. "
            + "The funnel counts cumulatively: its accepted (\(funnelAccepted)) is the accepted, delivered and opened bars together "
            + "(\(a) + \(d) + \(o) = \(a + d + o)), because a delivered or opened delivery was accepted first."
        if data.futureReceipts > 0 {
            text += " \(data.futureReceipts) receipt(s) carry a device time after this report's time and are drawn at the report's time."
        }
        return text
    }

    static func percent(_ share: Double) -> String { String(format: "%.2f %%", share * 100) }

    /// A fixed colour per status, so every chart reads the same.
    static func color(_ status: String) -> String {
        switch status {
        case "pending": "#bdbdbd"
        case "retrying": "#ffb300"
        case "accepted": "#64b5f6"
        case "delivered": "#1e88e5"
        case "opened": "#2e7d32"
        case "invalid_token": "#8e24aa"
        case "rejected": "#e53935"
        case "expired": "#6d4c41"
        case "dead_lettered": "#212121"
        case "cancelled": "#ff7043"
        default: "#90a4ae"
        }
    }

    /// Escapes text for XML/HTML.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
