import PushAnalytics
import ArgumentParser
import Foundation
import PushPostgres
import PushWorker

struct MaintainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "maintain",
        abstract: "Partition upkeep: create the coming days' daily partitions, drop those past retention, refresh the ledger's statistics; remove devices not seen for registry.remove_after_days (run daily, e.g. from cron).")

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Create partitions for today and this many days ahead.")
    var daysAhead = 7

    @Option(name: .long, help: "Drop partitions whose whole day (UTC) ended more than this many days ago.")
    var retentionDays = 30

    @Option(name: .long, help: "Remove devices not seen (registered again) for this many days; 0 keeps them (default: the --config file's registry.remove_after_days, 270).")
    var removeDevicesAfterDays: Int?

    @Option(name: .long, help: "Worker configuration file (JSON) for registry.remove_after_days (env PUSHFLEET_CONFIG).")
    var config: String?

    @Flag(name: .long, help: "Only print what would be done.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.maintain")
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL")
        }
        guard daysAhead >= 0, retentionDays >= 1 else { throw CommandFailure("--days-ahead must be ≥ 0 and --retention-days ≥ 1") }
        if let days = removeDevicesAfterDays, !(0...3_650).contains(days) {
            throw CommandFailure("--remove-devices-after-days must be 0...3650 (0: keep every device)")
        }
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        let report = try await PartitionMaintenance(connection: connection, logger: logger)
            .run(daysAhead: daysAhead, retentionDays: retentionDays, dryRun: dryRun)
        let verb = dryRun ? "would be " : ""
        say(report.created.isEmpty ? "partitions: none to create" : "partitions \(verb)created: \(report.created.joined(separator: ", "))")
        say(report.dropped.isEmpty ? "partitions: none past \(retentionDays) days" : "partitions \(verb)dropped (detached, then dropped): \(report.dropped.joined(separator: ", "))")
        say("receipts older than the retention \(verb)deleted: \(report.receiptsDeleted)")
        say("notification ids older than the retention \(verb)deleted: \(report.notificationIDsDeleted)")
        if !report.analyzed.isEmpty { say("statistics refreshed (ANALYZE): \(report.analyzed.joined(separator: ", "))") }
        let removeAfter = try removeDevicesAfterDays ?? deviceRetention()
        if removeAfter > 0 {
            let removed = try await DeviceUpkeep.removeUnseen(days: removeAfter, dryRun: dryRun, on: connection)
            say("devices not seen for \(removeAfter) days \(verb)removed: \(removed)")
        } else {
            say("devices: kept whatever their age (registry.remove_after_days 0)")
        }
        for failure in report.failures { say("FAILED to create partitions for \(failure)") }
        if !report.failures.isEmpty { throw ExitCode(1) }
    }

    /// `registry.remove_after_days` of the configuration file, when there is one; else its default.
    private func deviceRetention() throws -> Int {
        guard let path = config ?? ProcessInfo.processInfo.environment["PUSHFLEET_CONFIG"] else {
            return WorkerConfiguration.Registry().removeAfterDays
        }
        do { return try WorkerConfiguration.load(path: path).registry.removeAfterDays } catch { throw CommandFailure("\(error)") }
    }
}
