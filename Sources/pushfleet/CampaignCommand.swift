import ArgumentParser
import Foundation
import Logging
import PushCore
import PushPostgres
import PushWorker

struct CampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Stop and resume campaigns (notifications tagged with the same `campaign`).",
        subcommands: [Cancel.self, Resume.self])

    /// Where the ledger is.
    struct Connection: ParsableArguments {
        @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL; else the --config file's).")
        var databaseURL: String?

        @Option(name: .long, help: "Worker configuration file (JSON) for the database (env PUSHFLEET_CONFIG).")
        var config: String?

        func configuration() throws -> WorkerConfiguration? {
            guard let path = config ?? ProcessInfo.processInfo.environment["PUSHFLEET_CONFIG"] else { return nil }
            do { return try WorkerConfiguration.load(path: path) } catch { throw CommandFailure("\(error)") }
        }

        func connect(_ logger: Logger) async throws -> PostgresConnection {
            let env = ProcessInfo.processInfo.environment
            guard let url = try databaseURL ?? env["PUSHFLEET_DATABASE_URL"] ?? configuration()?.database.url else {
                throw CommandFailure("no database: pass --database-url or --config, or set PUSHFLEET_DATABASE_URL")
            }
            return try await PostgresConnection.connect(url: url, logger: logger)
        }
    }

    /// The campaign argument, refused by the same rule intake applies.
    static func checked(_ campaign: String) throws -> String {
        if let problem = Campaign.problem(campaign) { throw ValidationError("campaign \(problem)") }
        return campaign
    }

    /// Who runs the command: `--by`, else `$USER@host`.
    static func operatorName(_ by: String?) throws -> String {
        let name = by ?? "\(ProcessInfo.processInfo.environment["USER"] ?? "unknown")@\(ProcessInfo.processInfo.hostName)"
        // Printed with every cancelled row's detail: the campaign rule (printable, bounded) fits it.
        if let problem = Campaign.problem(name) { throw ValidationError("--by \(problem)") }
        return name
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a campaign on every worker: no send for it starts more than a few seconds after this returns.",
            discussion: """
                Records the cancellation in PostgreSQL (every worker reads it each second, and before its first \
                batch), then moves every delivery of the campaign that is not final (pending, retrying, parked) to \
                `cancelled`, with who, when and why in its detail. Deliveries the workers take from now on, from the \
                intake, a retry tier or a parked topic, end `cancelled` without a request. `campaign resume` lifts it.
                """)

        @Argument(help: "The campaign, as the notifications' `campaign` field names it.")
        var campaign: String

        @Option(name: .long, help: "Why (kept on the cancellation and in every cancelled row's detail; at most 500 bytes).")
        var reason: String?

        @Option(name: .long, help: "Who cancels it (default: $USER@host).")
        var by: String?

        @OptionGroup var connection: Connection
        @OptionGroup var common: CommonOptions

        func validate() throws {
            _ = try CampaignCommand.checked(campaign)
            if let reason {
                guard reason.utf8.count <= CampaignCancellations.maxReasonBytes, !reason.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                    throw ValidationError("--reason: at most \(CampaignCancellations.maxReasonBytes) bytes, one line")
                }
            }
        }

        func run() async throws {
            let logger = common.makeLogger("pushfleet.campaign")
            let db = try await connection.connect(logger)
            defer { db.close() }
            let result = try await CampaignCancellations.cancel(campaign, reason: reason, by: try CampaignCommand.operatorName(by), on: db)
            let stop = result.record.stop
            if result.isNew {
                say("campaign \(campaign) cancelled by \(stop.by) at \(Timestamps.format(stop.at)); every worker stops its sends "
                    + "within about \(CampaignStops.refreshInterval.components.seconds) s")
            } else {
                say("campaign \(campaign) was already cancelled by \(stop.by) at \(Timestamps.format(stop.at))")
            }
            say("\(result.deliveriesCancelled) deliveries in the ledger moved to cancelled (pending, retrying or parked)")
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lift a campaign's cancellation: what the workers take from now on is sent; cancelled deliveries stay cancelled.")

        @Argument(help: "The campaign.")
        var campaign: String

        @Option(name: .long, help: "Who resumes it (default: $USER@host).")
        var by: String?

        @OptionGroup var connection: Connection
        @OptionGroup var common: CommonOptions

        func validate() throws { _ = try CampaignCommand.checked(campaign) }

        func run() async throws {
            let logger = common.makeLogger("pushfleet.campaign")
            let db = try await connection.connect(logger)
            defer { db.close() }
            guard let closed = try await CampaignCancellations.resume(campaign, by: try CampaignCommand.operatorName(by), on: db) else {
                say("campaign \(campaign) is not cancelled: nothing to resume")
                return
            }
            say("campaign \(campaign) resumed (cancelled by \(closed.stop.by) at \(Timestamps.format(closed.stop.at))); "
                + "deliveries not yet handled are sent, the \(closed.deliveriesCancelled) the cancel moved to cancelled stay so")
        }
    }
}
