import PushAnalytics
import ArgumentParser
import Foundation
import PushCore
import PushPostgres
import PushWorker

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print the delivery funnel and top failure reasons; with --out, write report.html, deliveries.svg and report.json.",
        discussion: "With --campaign, one campaign's funnel instead (whatever its age): with --out, campaign.html and campaign.json.")

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Only this app.")
    var app: String?

    @Option(name: .long, help: "Window: deliveries created in the last N m/h/d (rounded down to the hour), e.g. 30m, 24h, 7d.")
    var since = "24h"

    @Option(name: .long, help: "Directory to write the chart and numbers into.")
    var out: String?

    @Option(name: .long, help: "One campaign's funnel (by platform) instead of the whole fleet's.")
    var campaign: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.report")
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL")
        }
        guard let window = Self.seconds(since) else { throw CommandFailure("--since: expected e.g. 30m, 24h or 7d, got \(since)") }
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        if let campaign {
            if let problem = Campaign.problem(campaign) { throw CommandFailure("--campaign \(problem)") }
            let status = try await CampaignQueries.status(campaign, on: connection)
            say(CampaignRenderer.text(status), terminator: "")
            if let out { say("\nwrote \(try CampaignRenderer.write(status, to: out).joined(separator: ", "))") }
            return
        }
        let now = Date()
        let data = try await ReportQueries.load(on: connection, since: now.addingTimeInterval(-window), app: app, now: now)
        say(ReportRenderer.text(data), terminator: "")
        if let out {
            let paths = try ReportRenderer.write(data, to: out)
            say("\nwrote \(paths.joined(separator: ", "))")
        }
    }

    /// `30m`, `24h`, `7d` → seconds.
    static func seconds(_ text: String) -> Double? {
        guard let unit = text.last, let n = Double(text.dropLast()), n > 0 else { return nil }
        switch unit {
        case "m": return n * 60
        case "h": return n * 3600
        case "d": return n * 86_400
        default: return nil
        }
    }
}
