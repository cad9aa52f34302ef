import Foundation
import PushCore

/// Campaign status, list and funnel as text, JSON and HTML. Pure.
public enum CampaignRenderer {
    /// `pushfleet campaign status` for a person.
    public static func text(_ s: CampaignStatus) -> String {
        let t = s.total
        var out = "Campaign \(s.campaign)"
        if let c = s.cancellation {
            if c.resumedAt == nil {
                out += ": CANCELLED by \(c.by) at \(Timestamps.format(c.at))" + (c.reason.map { " (\($0))" } ?? "")
            } else if let resumed = c.resumedAt {
                out += ": resumed by \(c.resumedBy ?? "?") at \(Timestamps.format(resumed)) (cancelled by \(c.by) at \(Timestamps.format(c.at)))"
            }
        }
        out += "\nas of \(Timestamps.format(s.generatedAt))\n\n"
        var lines: [[String]] = [
            ["deliveries in the ledger", String(t.deliveries), "a row per (notification, device) a worker has decided"],
            ["sent", String(s.sent), "with at least one provider request"],
            ["accepted", String(t.accepted), "the provider took it"],
            ["delivered", String(t.delivered), "receipt from the device"],
            ["opened", String(t.opened), "receipt from the device"],
            ["invalid tokens", String(t.invalidToken), ""],
            ["rejected", String(t.rejected), ""],
            ["expired", String(t.expired), ""],
            ["dead-lettered", String(t.deadLettered), "on push.dlq"],
            ["cancelled", String(t.cancelled), ""],
            ["in flight", String(s.inFlight), "pending, retrying or parked"],
            ["send rate", String(format: "%.1f/s", s.sendsPerSecond), "requests, last \(Int(s.window)) s"],
            ["finish rate", String(format: "%.1f/s", s.finalPerSecond), "deliveries reaching a final status, last \(Int(s.window)) s"],
        ]
        lines.append(["bulk lane backlog", s.bulkBacklog.map(String.init) ?? "-",
                      s.bulkBacklog == nil ? "not asked (pass --config or --bootstrap-servers)" : "messages not consumed yet, all campaigns"])
        lines.append(["time to finish", s.secondsToFinish.map(duration) ?? "-",
                      s.isCancelled ? "cancelled" : "estimate: in flight + backlog at the finish rate"])
        lines.append(["first / last send", "\(t.firstSend.map(Timestamps.format) ?? "-") / \(t.lastSend.map(Timestamps.format) ?? "-")", ""])
        let labelWidth = lines.map(\.[0].count).max() ?? 0, valueWidth = lines.map(\.[1].count).max() ?? 0
        for l in lines {
            let label = l[0] + String(repeating: " ", count: labelWidth - l[0].count)
            let value = String(repeating: " ", count: valueWidth - l[1].count) + l[1]
            out += "\(label)  \(value)" + (l[2].isEmpty ? "" : "  \(l[2])") + "\n"
        }
        if !s.funnel.isEmpty {
            out += "\nBy platform\n\n" + funnelTable(s.funnel)
        }
        return out
    }

    /// `campaign status --json`: the same numbers for scripts.
    public static func json(_ s: CampaignStatus) -> JSONValue {
        let t = s.total
        func int(_ v: Int) -> JSONValue { .int(Int64(v)) }
        func date(_ d: Date?) -> JSONValue { d.map { .string(Timestamps.format($0)) } ?? .null }
        var members: [(key: String, value: JSONValue)] = [
            ("campaign", .string(s.campaign)), ("generated_at", date(s.generatedAt)),
            ("cancelled", .bool(s.isCancelled)),
        ]
        if let c = s.cancellation {
            members.append(("cancellation", .object([
                ("by", .string(c.by)), ("at", date(c.at)), ("reason", c.reason.map(JSONValue.string) ?? .null),
                ("deliveries_cancelled", int(c.deliveriesCancelled)), ("resumed_at", date(c.resumedAt)),
                ("resumed_by", c.resumedBy.map(JSONValue.string) ?? .null),
            ])))
        }
        members += [
            ("ledger_deliveries", int(t.deliveries)), ("sent", int(s.sent)), ("accepted", int(t.accepted)),
            ("delivered", int(t.delivered)), ("opened", int(t.opened)), ("invalid_token", int(t.invalidToken)),
            ("rejected", int(t.rejected)), ("expired", int(t.expired)), ("dead_lettered", int(t.deadLettered)),
            ("cancelled_deliveries", int(t.cancelled)), ("in_flight", int(s.inFlight)),
            ("bulk_lane_backlog_messages", s.bulkBacklog.map(int) ?? .null),
            ("sends_per_second", .double(s.sendsPerSecond)), ("final_per_second", .double(s.finalPerSecond)),
            ("rate_window_seconds", .double(s.window)),
            ("seconds_to_finish", s.secondsToFinish.map(JSONValue.double) ?? .null),
            ("first_send", date(t.firstSend)), ("last_send", date(t.lastSend)),
            ("by_platform", .array(s.funnel.map(funnelJSON))),
        ]
        return .object(members)
    }

    /// One funnel row as JSON.
    public static func funnelJSON(_ r: CampaignFunnelRow) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("campaign", .string(r.campaign)), ("platform", .string(r.platform))]
        for c in r.columns { members.append((c.name, .int(Int64(c.value)))) }
        members.append(("p50_seconds", r.p50Seconds.map(JSONValue.double) ?? .null))
        members.append(("p99_seconds", r.p99Seconds.map(JSONValue.double) ?? .null))
        members.append(("first_send", r.firstSend.map { .string(Timestamps.format($0)) } ?? .null))
        members.append(("last_send", r.lastSend.map { .string(Timestamps.format($0)) } ?? .null))
        return .object(members)
    }

    /// The funnel by platform, with a total line when there are several.
    public static func funnelTable(_ rows: [CampaignFunnelRow]) -> String {
        func line(_ r: CampaignFunnelRow) -> [String] {
            [r.platform] + r.columns.map { String($0.value) } + [seconds(r.p50Seconds), seconds(r.p99Seconds)]
        }
        var lines = rows.map(line)
        if rows.count > 1, let campaign = rows.first?.campaign { lines.append(line(CampaignFunnelRow.total(of: rows, campaign: campaign))) }
        let header = ["platform"] + CampaignFunnelRow(campaign: "", platform: "").columns.map(\.name) + ["p50_s", "p99_s"]
        return ReportRenderer.table(header: header, rows: lines)
    }

    /// `pushfleet campaign list`.
    public static func listTable(_ rows: [CampaignSummary]) -> String {
        guard !rows.isEmpty else { return "(no campaigns)\n" }
        return ReportRenderer.table(
            header: ["campaign", "state", "first created", "last created", "deliveries", "accepted", "cancelled", "in_progress"],
            rows: rows.map { s in
                [s.campaign, s.isCancelled ? "cancelled" : s.inProgress > 0 ? "running" : "done",
                 s.firstCreated.map(Timestamps.format) ?? "-", s.lastCreated.map(Timestamps.format) ?? "-",
                 String(s.deliveries), String(s.accepted), String(s.cancelled), String(s.inProgress)]
            }, leftColumns: 4)
    }

    /// `report --campaign` as a self-contained HTML page: the status, the
    /// funnel by platform and a chart of where the deliveries ended.
    public static func html(_ s: CampaignStatus) -> String {
        let esc = ReportRenderer.escape
        func row(_ cells: [String], tag: String = "td") -> String { ReportRenderer.tableRow(cells, tag: tag) }
        let t = s.total
        // One column per platform (and the total), one row per measure: as
        // narrow as the platforms are few, whatever the page's width.
        let platforms = s.funnel + (s.funnel.count > 1 ? [t] : [])
        var funnel = row([""] + platforms.map(\.platform), tag: "th")
        for (index, name) in t.columns.map(\.name).enumerated() {
            funnel += row([name] + platforms.map { String($0.columns[index].value) })
        }
        funnel += row(["p50 s"] + platforms.map { seconds($0.p50Seconds) })
        funnel += row(["p99 s"] + platforms.map { seconds($0.p99Seconds) })
        funnel += row(["first send"] + platforms.map { $0.firstSend.map(shortTime) ?? "-" })
        funnel += row(["last send"] + platforms.map { $0.lastSend.map(shortTime) ?? "-" })
        let outcomes: [(status: String, count: Int)] = [
            ("accepted", t.accepted - t.delivered), ("delivered", t.delivered - t.opened), ("opened", t.opened),
            ("invalid_token", t.invalidToken), ("rejected", t.rejected), ("expired", t.expired),
            ("dead_lettered", t.deadLettered), ("cancelled", t.cancelled), ("in progress", t.inProgress),
        ]
        let chart = ReportRenderer.barChart(
            outcomes.map { (label: ReportRenderer.legendLabel($0.status), value: max(0, $0.count)) },
            title: "Where the campaign's \(t.deliveries) deliveries are", colors: outcomes.map { ReportRenderer.color($0.status) })
        var banner = ""
        if let c = s.cancellation {
            let what = c.resumedAt == nil ? "Cancelled" : "Was cancelled"
            banner = "<p class=\"cancel\">\(what) by \(esc(c.by)) at \(esc(shortTime(c.at)))"
                + (c.reason.map { ": \(esc($0))" } ?? "") + " (\(c.deliveriesCancelled) deliveries moved to cancelled by the command)"
                + (c.resumedAt.map { "; resumed by \(esc(c.resumedBy ?? "?")) at \(esc(shortTime($0)))" } ?? "") + ".</p>\n"
        }
        let style = "p.cancel { background: #fbe9e7; border-left: 4px solid #ff7043; padding: 8px 12px; max-width: 60em; }\n"
        return ReportRenderer.page(title: "PushFleet campaign \(s.campaign)", style: style, body: """
            <h1>Campaign \(esc(s.campaign))</h1>
            <p>Generated \(esc(shortTime(s.generatedAt))). \(s.sent) of its \(t.deliveries) deliveries were sent to a provider; \
            \(s.inFlight) are still in flight.</p>
            \(banner)\(chart)
            <p class="note">accepted: the provider took the notification; delivered and opened: the app on the device sent a receipt \
            (each delivery is drawn once, at its current status). cancelled: not sent because the campaign was cancelled.</p>
            <h2>Funnel by platform</h2>
            <p class="note">The counts are cumulative as in the delivery report: accepted includes delivered and opened. \
            p50/p99: created → accepted. platform none: a user id with no device to send to.</p>
            <table class="funnel">
            \(funnel)</table>
            """)
    }

    /// Writes campaign.html and campaign.json into `directory`; returns their paths.
    public static func write(_ s: CampaignStatus, to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var paths: [String] = []
        for (name, bytes) in [("campaign.html", Array(html(s).utf8)), ("campaign.json", json(s).encoded())] {
            let path = (directory as NSString).appendingPathComponent(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            paths.append(path)
        }
        return paths
    }

    static func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "-" }

    /// A time to the second, for people: `2026-11-28 00:36:06Z`.
    static func shortTime(_ date: Date) -> String {
        let full = Timestamps.format(date)  // 2026-11-28T00:36:06.373710Z
        let seconds = full.prefix { $0 != "." && $0 != "Z" }
        return seconds.replacingOccurrences(of: "T", with: " ") + "Z"
    }

    /// `4 min 12 s`, `2 h 5 min`, `12 s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "-" }
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600) h \(s % 3600 / 60) min" }
        if s >= 60 { return "\(s / 60) min \(s % 60) s" }
        return "\(s) s"
    }
}
