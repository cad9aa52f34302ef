import ArgumentParser
import Foundation
import Logging
import PushAnalytics
import PushCore
import PushPostgres
import PushWorker

struct CampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Stop, resume and follow campaigns (notifications tagged with the same `campaign`).",
        subcommands: [Cancel.self, Resume.self, Status.self, List.self])

    /// Where the ledger (and, for `status`, Kafka) is.
    struct Connection: ParsableArguments {
        @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL; else the --config file's).")
        var databaseURL: String?

        @Option(name: .long, help: "Worker configuration file (JSON) for the database, Kafka and topics (env PUSHFLEET_CONFIG).")
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
                    + "within a few seconds (each reads the cancellations every \(CampaignStops.refreshInterval.components.seconds) s)")
            } else {
                say("campaign \(campaign) was already cancelled by \(stop.by) at \(Timestamps.format(stop.at))")
            }
            say("\(result.deliveriesCancelled) deliveries in the ledger moved to cancelled (pending, retrying or parked); "
                + "follow it with `pushfleet campaign status \(campaign)`")
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

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A campaign's deliveries so far: sent, accepted, failed, cancelled, in flight, its rate and time to finish.",
            discussion: """
                From the ledger (a delivery has a row once a worker decided it) and, with Kafka settings (--config, \
                --bootstrap-servers or PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS), the bulk lane's backlog: messages not consumed \
                yet, of every campaign on that lane. Rates are over the last --window seconds.
                """)

        @Argument(help: "The campaign.")
        var campaign: String

        @Flag(name: .long, help: "Print JSON (for scripts).")
        var json = false

        @Option(name: .long, help: "Seconds the rates are measured over.")
        var window = 60

        @Option(name: .long, help: "Kafka bootstrap servers, for the bulk lane's backlog (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
        var bootstrapServers: String?

        @OptionGroup var connection: Connection
        @OptionGroup var common: CommonOptions

        func validate() throws {
            _ = try CampaignCommand.checked(campaign)
            guard (1...86_400).contains(window) else { throw ValidationError("--window must be 1...86400 seconds") }
        }

        func run() async throws {
            let logger = common.makeLogger("pushfleet.campaign")
            let db = try await connection.connect(logger)
            defer { db.close() }
            var status = try await CampaignQueries.status(campaign, on: db, window: Double(window))
            status.bulkBacklog = try await BulkBacklog.messages(configuration: connection.configuration(),
                                                                bootstrapServers: bootstrapServers, logger: logger)
            if json {
                say(String(decoding: CampaignRenderer.json(status).encoded(), as: UTF8.self))
            } else {
                say(CampaignRenderer.text(status), terminator: "")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent campaigns: deliveries, accepted, cancelled, in flight.")

        @Option(name: .long, help: "Campaigns with deliveries created (or a cancellation) in the last N m/h/d.")
        var since = "7d"

        @Option(name: .long, help: "At most this many, newest first.")
        var limit = 50

        @OptionGroup var connection: Connection
        @OptionGroup var common: CommonOptions

        func run() async throws {
            guard let window = ReportCommand.seconds(since) else { throw CommandFailure("--since: expected e.g. 30m, 24h or 7d, got \(since)") }
            guard limit > 0 else { throw CommandFailure("--limit must be at least 1") }
            let logger = common.makeLogger("pushfleet.campaign")
            let db = try await connection.connect(logger)
            defer { db.close() }
            let rows = try await CampaignQueries.list(since: Date().addingTimeInterval(-window), limit: limit, on: db)
            say(CampaignRenderer.listTable(rows), terminator: "")
        }
    }
}
