import ArgumentParser
import Foundation
import PushKafka
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
        abstract: "Re-publish chosen dead-letter messages to the intake topic (attempts start again from 1).",
        discussion: """
            Reads the dead-letter topic as consumer group `--group` (default pushfleet-dlq-replay), so a \
            message replayed once is not replayed again by the next run; stops when it has caught up. \
            Replayed deliveries that are already final in the ledger are not sent twice.
            """)

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "Topic prefix.")
    var topicPrefix = "push"

    @Option(name: .long, help: "Only messages whose reason contains this text.")
    var reasonContains: String?

    @Option(name: .long, help: "Only messages whose body contains this notification id.")
    var notificationID: String?

    @Option(name: .long, help: "Replay at most this many messages.")
    var limit = Int.max

    @Option(name: .long, help: "Consumer group that remembers what was replayed.")
    var group = "pushfleet-dlq-replay"

    @Flag(name: .long, help: "List what would be replayed; publish and commit nothing.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.dlq")
        guard let servers = bootstrapServers ?? ProcessInfo.processInfo.environment["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        let dlqTopic = "\(topicPrefix).dlq"
        let intake = "\(topicPrefix).notifications"
        let consumer = try KafkaConsumer(bootstrapServers: servers, groupID: group, topics: [dlqTopic], logger: logger)
        let producer = try KafkaProducer(bootstrapServers: servers, logger: logger)
        var replayed = 0, skipped = 0, idle = 0
        let joinDeadline = ContinuousClock.now + .seconds(60)
        do {
            while idle < 10, replayed < limit {
                let messages = try await consumer.poll(maxMessages: 500, timeout: .milliseconds(500))
                // Idle only counts once the group has given us the partitions (joining takes seconds).
                let assigned = !((try? consumer.assignment()) ?? []).isEmpty || ContinuousClock.now > joinDeadline
                idle = messages.isEmpty && assigned ? idle + 1 : 0
                for message in messages {
                    // At the limit: stop before storing anything further, so the rest stays for a later run.
                    if replayed >= limit { break }
                    let reason = RetryHeaders(message: message).reason ?? ""
                    let body = String(decoding: message.value, as: UTF8.self)
                    let chosen = (reasonContains.map { reason.contains($0) } ?? true)
                        && (notificationID.map { body.lowercased().contains($0.lowercased()) } ?? true)
                    if chosen {
                        say("\(dryRun ? "would replay" : "replay") \(message.topicPartition)@\(message.offset): \(reason.prefix(120))")
                        if !dryRun {
                            let origin = "\(message.topic)/\(message.partition)/\(message.offset)"
                            try await producer.send(topic: intake, key: message.key, value: message.value,
                                                    headers: [("pushfleet-replayed-from", Array(origin.utf8))])
                        }
                        replayed += 1
                    } else {
                        skipped += 1
                    }
                    if !dryRun { try consumer.storeOffset(message.topicPartition, offset: message.offset + 1) }
                }
            }
            if !dryRun { try await consumer.commit() }
        } catch {
            await consumer.close()
            await producer.close()
            throw error
        }
        await consumer.close()
        await producer.close()
        say("\(dryRun ? "would replay" : "replayed") \(replayed), skipped \(skipped)")
    }
}
