import ArgumentParser
import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushWorker

struct DLQCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect and replay the dead-letter topic.",
        subcommands: [DLQListCommand.self, DLQReplayCommand.self])
}

/// Where the dead letters are, and which of them a `dlq` command takes.
struct DLQOptions: ParsableArguments {
    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Topic prefix.")
    var topicPrefix = TopicNames.defaultPrefix

    @Option(name: .long, help: ArgumentHelp(
        "Only dead letters whose reason contains this text, whatever its case.",
        discussion: "The reason is the pushfleet-dlq-reason header, e.g. `retries exhausted after attempt 5: ServiceUnavailable`."))
    var reasonContains: String?

    @Option(name: .long, help: "Only the dead letters of this notification id.")
    var notificationID: String?

    @Option(name: .long, help: "At most this many dead letters.")
    var limit = Int.max

    /// The filter the options name (`again` is the caller's).
    func filter(again: Bool = false) throws -> DeadLetterReplay.Filter {
        guard limit > 0 else { throw CommandFailure("--limit must be positive") }
        var filter = DeadLetterReplay.Filter(reasonContains: reasonContains, limit: limit, again: again)
        if let notificationID {
            guard let id = UUID(uuidString: notificationID) else { throw CommandFailure("--notification-id \(notificationID) is not a UUID") }
            filter.notificationID = id
        }
        return filter
    }

    /// The Kafka bootstrap servers and the database URL, from the options or the environment.
    func endpoints(databaseNeed: String) throws -> (servers: String, databaseURL: String) {
        let env = ProcessInfo.processInfo.environment
        guard let servers = bootstrapServers ?? env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        guard let url = databaseURL ?? env["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL (\(databaseNeed))")
        }
        return (servers, url)
    }

    /// Connects to PostgreSQL and opens a reader of the topics by offsets (its
    /// `group` is never joined), runs `body` with the bootstrap servers, the
    /// connection and the reader, and closes both however `body` ends.
    func withReader<T>(_ logger: Logger, group: String, databaseNeed: String,
                       _ body: (_ servers: String, PostgresConnection, KafkaPartitionReader) async throws -> T) async throws -> T {
        let (servers, url) = try endpoints(databaseNeed: databaseNeed)
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        let reader = try KafkaPartitionReader(bootstrapServers: servers, groupID: group, logger: logger)
        do {
            let result = try await body(servers, connection, reader)
            await reader.close()
            return result
        } catch {
            await reader.close()
            throw error
        }
    }

    /// What was read of each partition, against what the broker reported, and the
    /// run's `summary`: a run is complete only if every partition was read to the end
    /// its fetch reached.
    static func sayRead(_ partitions: [KafkaPartitionScan], limit: Int, summary: String) {
        for partition in partitions { say("read \(partition)") }
        let past = partitions.reduce(0) { $0 + $1.pastReportedEnd }
        if past > 0 { say("note: \(past) dead letter(s) lay at or past the end the broker reported; they were read too") }
        say(summary)
        if !partitions.allSatisfy(\.reachedEnd) {
            let open = partitions.filter { !$0.reachedEnd }.map { "\($0.partition)" }.joined(separator: ", ")
            say("NOT read to the end (--limit \(limit) reached): \(open) may hold more dead letters; run again to go on")
        }
    }
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
            with a new attempt series (the series they ended is kept in `delivery_replays`), and the \
            dead letter is recorded in `dlq_replays`: it is not replayed a second time unless \
            --again. --dry-run lists exactly what a run would do. \
            Each partition is read until the fetch finds nothing more, not only to the end the \
            broker reports (Tansu reports the last record batch's base offset + 1); the run prints, \
            per partition, the offsets it read against that reported end, and says so when --limit \
            stopped it before the end. `pushfleet dlq list` shows what is there and what was replayed.
            """)

    @OptionGroup var dlq: DLQOptions

    @Flag(name: .long, help: "Replay also dead letters an earlier run replayed.")
    var again = false

    @Flag(name: .long, help: "List what would be replayed; change and publish nothing.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.dlq")
        let filter = try dlq.filter(again: again)
        let report = try await dlq.withReader(logger, group: "pushfleet-dlq-replay",
                                              databaseNeed: "a replay reopens the ledger rows it re-sends") { servers, connection, reader in
            let producer = dryRun ? nil : try KafkaProducer(bootstrapServers: servers, logger: logger)
            do {
                let report = try await DeadLetterReplay(reader: reader, producer: producer, connection: connection, logger: logger)
                    .run(topics: TopicNames(prefix: dlq.topicPrefix), filter: filter, dryRun: dryRun) { [dryRun] entry in
                        let id = entry.notificationID?.uuidString.lowercased() ?? "-"
                        say("\(dryRun ? "would replay" : "replayed") \(entry.origin) notification \(id), "
                            + "\(entry.ledgerRows) ledger row(s) \(dryRun ? "to reopen" : "reopened"): \(entry.reason.prefix(120))")
                    }
                await producer?.close()
                return report
            } catch {
                await producer?.close()
                throw error
            }
        }
        DLQOptions.sayRead(report.partitions, limit: dlq.limit, summary:
            "\(dryRun ? "would replay" : "replayed") \(report.count), skipped \(report.skipped) (filters), "
            + "already replayed \(report.alreadyReplayed)\(report.alreadyReplayed > 0 && !again ? " (--again replays them)" : "")")
    }
}
