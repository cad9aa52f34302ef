import ArgumentParser
import Foundation
import PushCore
import PushWorker

struct DLQListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show what is dead-lettered: why, whether it was replayed, and what its ledger rows say now.",
        discussion: """
            Reads the dead-letter topic by offsets, like `dlq replay` (no consumer group, nothing \
            committed), and changes nothing. One line per dead letter: where it is \
            (topic/partition/offset), when it was dead-lettered (its Kafka timestamp), its \
            notification id and app, `replayed <time>` or `not replayed` (from dlq_replays), its \
            notification's ledger rows by status now, and its reason (the pushfleet-dlq-reason \
            header). The same filters as `dlq replay` choose what `dlq replay` would take.
            """)

    @OptionGroup var dlq: DLQOptions

    @Flag(name: .long, help: "Only dead letters never replayed (what `dlq replay` would take without --again).")
    var notReplayed = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.dlq")
        let filter = try dlq.filter()
        let report = try await dlq.withReader(logger, group: "pushfleet-dlq-list",
                                              databaseNeed: "the list says which dead letters were replayed and what their ledger rows say") {
            _, connection, reader in
            say(["dead letter", "dead-lettered at", "notification", "app", "replayed", "ledger now", "reason"].joined(separator: "  "))
            return try await DeadLetterReplay(reader: reader, producer: nil, connection: connection, logger: logger)
                .list(topics: TopicNames(prefix: dlq.topicPrefix), filter: filter, notReplayedOnly: notReplayed) { say(Self.line($0)) }
        }
        DLQOptions.sayRead(report.partitions, limit: dlq.limit, summary:
            "\(report.count) dead letter(s) listed: \(report.replayed) replayed, \(report.count - report.replayed) not replayed; "
            + "skipped \(report.skipped) (filters)")
    }

    /// One dead letter, its fields two spaces apart (the reason last, on one line, cut to 200 characters).
    static func line(_ entry: DeadLetterReplay.Listed) -> String {
        let ledger = entry.ledger.isEmpty ? "-" : entry.ledger.map { "\($0.status) \($0.rows)" }.joined(separator: ", ")
        return [
            entry.origin,
            entry.deadLetteredAt.map(Timestamps.format) ?? "-",
            entry.notificationID?.uuidString.lowercased() ?? "-",
            entry.app ?? "-",
            entry.replayedAt.map { "replayed \(Timestamps.format($0))" } ?? "not replayed",
            ledger,
            entry.reason.isEmpty ? "-" : String(entry.reason.prefix(200).map { $0.isNewline ? " " : $0 }),
        ].joined(separator: "  ")
    }
}
