import ArgumentParser
import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushWorker

struct DLQCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect and replay the dead-letter topic.",
        subcommands: [DLQReplayCommand.self])
}

struct DLQReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Send chosen dead letters again: re-publish them to the intake topic and reopen their ledger rows.",
        discussion: """
            Reads the dead-letter topic by offsets (no consumer group, nothing committed), so a run \
            over a few messages takes seconds and every later run, with any filter, sees every \
            message. For each chosen dead letter, the dead-lettered deliveries it carries move back \
            to `pending` (deliveries.replayed_at, replay_of, replays), so the worker sends them again \
            with a new attempt series, and the dead letter is recorded in `dlq_replays`: it is not \
            replayed a second time unless --again. --dry-run lists exactly what a run would do. \
            Each partition is read until the fetch finds nothing more, not only to the end the \
            broker reports (Tansu reports the last record batch's base offset + 1); the run prints, \
            per partition, the offsets it read against that reported end, and says so when --limit \
            stopped it before the end.
            """)

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Topic prefix.")
    var topicPrefix = TopicNames.defaultPrefix

    @Option(name: .long, help: "Only messages whose reason contains this text.")
    var reasonContains: String?

    @Option(name: .long, help: "Only the dead letters of this notification id.")
    var notificationID: String?

    @Option(name: .long, help: "Replay at most this many messages.")
    var limit = Int.max

    @Flag(name: .long, help: "Replay also dead letters an earlier run replayed.")
    var again = false

    @Flag(name: .long, help: "List what would be replayed; change and publish nothing.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.dlq")
        let env = ProcessInfo.processInfo.environment
        guard let servers = bootstrapServers ?? env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        guard let url = databaseURL ?? env["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL (a replay reopens the ledger rows it re-sends)")
        }
        var filter = DeadLetterReplay.Filter(reasonContains: reasonContains, limit: limit, again: again)
        if let notificationID {
            guard let id = UUID(uuidString: notificationID) else { throw CommandFailure("--notification-id \(notificationID) is not a UUID") }
            filter.notificationID = id
        }
        guard limit > 0 else { throw CommandFailure("--limit must be positive") }
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        let reader = try KafkaPartitionReader(bootstrapServers: servers, groupID: "pushfleet-dlq-replay", logger: logger)
        let producer = dryRun ? nil : try KafkaProducer(bootstrapServers: servers, logger: logger)
        let report: DeadLetterReplay.Report
        do {
            report = try await DeadLetterReplay(reader: reader, producer: producer, connection: connection, logger: logger)
                .run(topics: TopicNames(prefix: topicPrefix), filter: filter,
                     dryRun: dryRun) { [dryRun] entry in
                    let id = entry.notificationID?.uuidString.lowercased() ?? "-"
                    say("\(dryRun ? "would replay" : "replayed") \(entry.origin) notification \(id), "
                        + "\(entry.ledgerRows) ledger row(s) reopened: \(entry.reason.prefix(120))")
                }
        } catch {
            await reader.close()
            await producer?.close()
            throw error
        }
        await reader.close()
        await producer?.close()
        // What was read, against what the broker reported: the run is complete only if
        // every partition was read to the end its fetch reached.
        for partition in report.partitions { say("read \(partition)") }
        if report.pastReportedEnd > 0 {
            say("note: \(report.pastReportedEnd) dead letter(s) lay at or past the end the broker reported; they were read too")
        }
        say("\(dryRun ? "would replay" : "replayed") \(report.count), skipped \(report.skipped) (filters), "
            + "already replayed \(report.alreadyReplayed)\(report.alreadyReplayed > 0 && !again ? " (--again replays them)" : "")")
        if !report.readToEnd {
            let open = report.partitions.filter { !$0.reachedEnd }.map { "\($0.partition)" }.joined(separator: ", ")
            say("NOT read to the end (--limit \(limit) reached): \(open) may hold more dead letters; run again to go on")
        }
    }
}
