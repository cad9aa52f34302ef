import Foundation
import PushCore

/// Turns report rows into text: terminal tables, SVG, HTML and JSON. Pure.
public enum ReportRenderer {
    /// An aligned text table: the first `leftColumns` columns left-aligned, the others right-aligned.
    public static func table(header: [String], rows: [[String]], leftColumns: Int = 1) -> String {
        table(TableShape(header: header, text: Set(0..<leftColumns)), rows)
    }

    /// An aligned text table: text columns left-aligned, numbers right-aligned.
    static func table(_ shape: TableShape, _ rows: [[String]]) -> String {
        var widths = shape.header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                return shape.text.contains(i) ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        var out = [line(shape.header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        out += rows.map(line)
        // A text column last is padded for nothing.
        return out.map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n") + "\n"
    }

    /// A table's header, and which of its columns hold text (names, statuses,
    /// reason codes, even when they are digits) rather than numbers: both the
    /// terminal and the HTML tables align by it.
    struct TableShape {
        var header: [String]
        var text: Set<Int>
    }

    static let funnelShape = TableShape(header: ["app", "platform"] + FunnelRow(app: "", platform: "").columns.map(\.name), text: [0, 1])
    static let failureShape = TableShape(header: ["app", "platform", "status", "reason", "deliveries", "share"], text: [0, 1, 2, 3])
    static let retryShape = TableShape(header: ["attempts", "deliveries", "accepted", "dead_lettered", "replayed", "avg_s_retrying"],
                                       text: [])
    static let latencyShape = TableShape(header: ["app", "platform", "from", "accepted", "p50_ms", "p90_ms", "p99_ms"], text: [0, 1, 2])
    static let rejectionShape = TableShape(header: ["source", "kind", "count", "replayed", "example"], text: [0, 1, 4])
    static let replayShape = TableShape(
        header: ["app", "platform", "replayed", "recovered", "dead_lettered_again", "failed", "in_progress", "attempts_before"], text: [0, 1])

    /// The funnel's columns summed over its rows, labelled `total`; nil for one row or none.
    static func funnelTotal(_ rows: [FunnelRow]) -> FunnelRow? {
        guard rows.count > 1 else { return nil }
        var total = FunnelRow(app: "total", platform: "")
        for r in rows {
            total.enqueued += r.enqueued
            total.counts.add(r.counts)
        }
        return total
    }

    /// The cells of the funnel's rows, then of its total when there are several.
    static func funnelCells(_ rows: [FunnelRow]) -> [[String]] {
        (rows + (funnelTotal(rows).map { [$0] } ?? [])).map { r in [r.app, r.platform] + r.columns.map { String($0.value) } }
    }

    static func failureCells(_ r: FailureRow) -> [String] {
        [r.app, r.platform, r.status, r.reason.isEmpty ? "-" : r.reason, String(r.deliveries), percent(r.share)]
    }

    static func retryCells(_ r: RetryRow) -> [String] {
        [String(r.attempts), String(r.deliveries), String(r.accepted), String(r.deadLettered), String(r.replayed),
         String(format: "%.1f", r.averageSecondsRetrying)]
    }

    static func latencyCells(_ r: LatencyRow) -> [String] {
        [r.app, r.platform, r.clock.rawValue, String(r.accepted), String(format: "%.0f", r.p50), String(format: "%.0f", r.p90),
         String(format: "%.0f", r.p99)]
    }

    static func rejectionCells(_ r: RejectionRow, exampleLength: Int) -> [String] {
        [r.source, r.kind, String(r.count), String(r.replayed), String(r.example.prefix(exampleLength))]
    }

    static func replayCells(_ r: ReplayRow) -> [String] {
        [r.app, r.platform] + [r.replayed, r.recovered, r.deadLetteredAgain, r.failed, r.inProgress, r.attemptsBefore].map(String.init)
    }

    /// What a failure's share is a share of.
    static let shareCaption = "share: of all the deliveries of that app and platform in the window (the funnel's enqueued)."
    /// What the attempts table counts.
    static let retriesCaption = "attempts: in the delivery's last series (a dlq replay starts a new one); "
        + "replayed: deliveries whose dead letter was replayed; avg_s_retrying: first to last attempt of that series."
    /// Where each latency clock starts.
    static let latencyCaption = "from created: the notification's created_at, set by its producer (retries and replays included); "
        + "from enqueued: the Kafka timestamp of the intake message it first came in, what the fleet took."
    /// What the replay table counts.
    static let replaysCaption = "Dead letters pushfleet dlq replay sent again, and what came of them: recovered (accepted, delivered "
        + "or opened), dead-lettered again, failed (invalid_token, rejected, expired) or still in progress; "
        + "attempts_before: attempts of the series that were dead-lettered."

    /// The funnel per app × platform, with a total line when there are several.
    public static func funnelTable(_ rows: [FunnelRow]) -> String { table(funnelShape, funnelCells(rows)) }

    /// Top failure reasons.
    public static func failuresTable(_ rows: [FailureRow]) -> String { table(failureShape, rows.map(failureCells)) }

    /// Final deliveries by attempts needed.
    public static func retriesTable(_ rows: [RetryRow]) -> String { table(retryShape, rows.map(retryCells)) }

    /// created → accepted and enqueued → accepted percentiles.
    public static func latencyTable(_ rows: [LatencyRow]) -> String { table(latencyShape, rows.map(latencyCells)) }

    /// Rejected messages and dead letters by kind.
    public static func rejectionsTable(_ rows: [RejectionRow]) -> String {
        table(rejectionShape, rows.map { rejectionCells($0, exampleLength: 80) })
    }

    /// Replayed dead letters per app × platform.
    public static func replaysTable(_ rows: [ReplayRow]) -> String { table(replayShape, rows.map(replayCells)) }

    /// The whole terminal report.
    public static func text(_ data: ReportData) -> String {
        var out = "Delivery funnel since \(Timestamps.format(data.since))\(data.app.map { " for \($0)" } ?? "")\n\n"
        out += data.funnel.isEmpty ? "(no deliveries)\n" : funnelTable(data.funnel)
        out += "\nTop failure reasons\n\n"
        out += data.failures.isEmpty ? "(no failures)\n" : failuresTable(data.failures) + shareCaption + "\n"
        out += "\nAttempts per final delivery\n\n"
        out += data.retries.isEmpty ? "(none final yet)\n" : retriesTable(data.retries) + retriesCaption + "\n"
        out += "\nLatency to acceptance\n\n"
        out += data.latency.isEmpty ? "(nothing accepted)\n" : latencyTable(data.latency) + latencyCaption + "\n"
        out += "\nRejected messages and dead letters\n\n"
        out += data.rejections.isEmpty ? "(none)\n" : rejectionsTable(data.rejections)
        out += "\nReplayed dead letters\n\n"
        out += data.replays.isEmpty ? "(none)\n" : replaysTable(data.replays) + replaysCaption + "\n"
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
        if let replays = replaySentence(data.replays) { text += " " + replays }
        if data.futureReceipts > 0 {
            text += " \(data.futureReceipts) receipt(s) carry a device time after this report's time and are drawn at the report's time."
        }
        return text
    }

    /// What became of the replayed dead letters, in one sentence; nil when none was replayed.
    static func replaySentence(_ rows: [ReplayRow]) -> String? {
        let replayed = rows.reduce(0) { $0 + $1.replayed }
        guard replayed > 0 else { return nil }
        let parts: [(Int, String)] = [
            (rows.reduce(0) { $0 + $1.recovered }, "recovered"), (rows.reduce(0) { $0 + $1.deadLetteredAgain }, "dead-lettered again"),
            (rows.reduce(0) { $0 + $1.failed }, "failed"), (rows.reduce(0) { $0 + $1.inProgress }, "still in progress"),
        ]
        let outcomes = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        return "\(replayed) dead-lettered deliveries were replayed: \(outcomes); each is drawn at its status now (Replayed dead letters, below)."
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
