import ArgumentParser
import Foundation
import PushCore
import Logging
import PushKafka
import PushWorker

struct SkipCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "Dead-letter one message and move the group past it (operator recovery when a message stops the workers).",
        discussion: """
            Reads the message at --offset of --topic/--partition (without joining the group), writes it to \
            PREFIX.dlq with `pushfleet-dlq-reason: skipped by operator[: REASON]` and its origin headers, waits \
            for the delivery report, then commits offset+1 for that partition in --group. A body larger than \
            --dlq-max-bytes is dead-lettered truncated, with `pushfleet-dlq-body: truncated <original bytes>`. \
            If the group already committed past the offset, nothing is done. Kafka accepts the commit only \
            while the group has no members: scale the workers to 0 first (docs/runbook.md).
            """)

    @Option(name: .long, help: "Topic of the message.")
    var topic: String

    @Option(name: .long, help: "Partition of the message.")
    var partition: Int32

    @Option(name: .long, help: "Offset of the message.")
    var offset: Int64

    @Option(name: .long, help: "Consumer group to move past the message (default: the configuration's, else pushfleet; env PUSHFLEET_KAFKA_GROUP_ID).")
    var group: String?

    @Option(name: .long, help: "Why it is skipped (goes into the dead letter's reason).")
    var reason: String?

    @Option(name: .long, help: "Worker configuration file (JSON) for bootstrap servers, topic prefix, group and Kafka properties (env PUSHFLEET_CONFIG).")
    var config: String?

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "Topic prefix (env PUSHFLEET_KAFKA_TOPIC_PREFIX; default push).")
    var topicPrefix: String?

    @Option(name: .long, help: "Largest dead letter (key, headers and body) the dead-letter topic takes; a larger body is truncated.")
    var dlqMaxBytes = 1_000_000

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard partition >= 0 else { throw ValidationError("--partition must be 0 or more") }
        guard offset >= 0 else { throw ValidationError("--offset must be 0 or more") }
        guard dlqMaxBytes >= 4096 else { throw ValidationError("--dlq-max-bytes must be at least 4096") }
    }

    func run() async throws {
        let logger = common.makeLogger("pushfleet.skip")
        let settings = try resolveSettings()
        let tp = KafkaTopicPartition(topic: topic, partition: partition)
        let reader = try KafkaPartitionReader(
            bootstrapServers: settings.bootstrap, groupID: settings.group, properties: settings.properties, logger: logger)
        do {
            try await skip(tp, settings: settings, reader: reader, logger: logger)
        } catch {
            await reader.close()
            throw error
        }
        await reader.close()
    }

    private func skip(_ tp: KafkaTopicPartition, settings: Settings, reader: KafkaPartitionReader, logger: Logger) async throws {
        if let committed = try await reader.committedOffset(tp), committed > offset {
            say("group \(settings.group) has already committed \(tp) at \(committed), past offset \(offset): nothing to do")
            return
        }
        // Refuse early where the cluster says who is in the group (real brokers do; the mock cluster cannot).
        if let info = try await reader.groupMembers(), info.members > 0 {
            throw CommandFailure(scaleToZero(settings.group, detail: "it has \(info.members) active member(s) (state \(info.state))"))
        }
        let message = try await reader.read(tp, offset: offset)
        // What was read, against the range the broker reports (a report only: Tansu gives
        // the last batch's base offset + 1 as the end, so a message can lie past it).
        if let range = try? await reader.reportedRange(tp) {
            let past = offset >= range.end ? "; it lies past the reported end, and was read all the same" : ""
            say("read \(tp)@\(offset) (\(message.value.count) bytes); the broker reports \(tp) as \(range.start)…\(range.end)\(past)")
        }
        let dlq = TopicNames(prefix: settings.prefix).deadLetter
        try await deadLetter(message, to: dlq, settings: settings, logger: logger)
        do {
            try await reader.commit(tp, offset: offset + 1)
        } catch let error as KafkaError where error.refusesSimpleCommit {
            // A real broker refuses this only while the group has members; librdkafka's mock
            // cluster refuses it for every group that ever had one. Commit as the group's only member.
            try await commitAsOnlyMember(tp, settings: settings, logger: logger)
        }
        say("committed \(tp) at \(offset + 1) for group \(settings.group): the workers continue after the skipped message")
    }

    /// Writes `message` to `dlq` and waits for the delivery report.
    private func deadLetter(_ message: KafkaMessage, to dlq: String, settings: Settings, logger: Logger) async throws {
        let reasonText = "skipped by operator" + (reason.map { ": \($0)" } ?? "")
        let ours = ["pushfleet-dlq-reason", "pushfleet-dlq-body", "pushfleet-origin-topic", "pushfleet-origin-partition", "pushfleet-origin-offset"]
        var headers = message.headers.filter { !ours.contains($0.name) }
        headers += [
            (RetryHeaders.reasonKey, Array(reasonText.prefix(1000).utf8)),
            (RetryHeaders.originTopicKey, Array(message.topic.utf8)),
            (RetryHeaders.originPartitionKey, Array(String(message.partition).utf8)),
            (RetryHeaders.originOffsetKey, Array(String(message.offset).utf8)),
        ]
        let producer = try KafkaProducer(
            bootstrapServers: settings.bootstrap,
            properties: settings.properties.merging(["message.max.bytes": String(max(dlqMaxBytes, 1_000_000) + 65_536)]) { $1 },
            logger: logger)
        var body = message.value
        var truncated = false
        let fixed = (message.key?.count ?? 0) + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.count } + 512
        var limit = dlqMaxBytes - fixed
        do {
            while true {
                var out = headers
                if body.count > limit || truncated {
                    truncated = true
                    body = Array(message.value.prefix(max(0, limit)))
                    out.append(("pushfleet-dlq-body", Array("truncated \(message.value.count)".utf8)))
                }
                do {
                    _ = try await producer.send(topic: dlq, key: message.key, value: body, headers: out)
                    break
                } catch let error as KafkaError where error.isMessageTooLarge && limit > 1024 {
                    // The topic takes less than --dlq-max-bytes: halve the body and try again.
                    logger.warning("dead-letter topic refused the message size; truncating further", metadata: ["error": "\(error)"])
                    limit = min(limit, body.count) / 2
                    truncated = true
                }
            }
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
        let size = truncated ? "body truncated to \(body.count) of \(message.value.count) bytes" : "\(body.count) bytes"
        say("dead-lettered \(message.topicPartition)@\(message.offset) to \(dlq) (\(size)): \(reasonText)")
    }

    /// Joins the group (eager assignor, so closing cannot hit librdkafka 2.0.2's
    /// cooperative-sticky assertion), and commits once it owns `tp`. Fails if another
    /// member keeps `tp`: the workers are still running.
    private func commitAsOnlyMember(_ tp: KafkaTopicPartition, settings: Settings, logger: Logger) async throws {
        let member = try KafkaConsumer(
            bootstrapServers: settings.bootstrap, groupID: settings.group, topics: [tp.topic],
            properties: settings.properties.merging([
                "partition.assignment.strategy": "roundrobin", "enable.auto.commit": "false",
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "500",
            ]) { $1 },
            logger: logger)
        let partitions = (try? await member.partitionCount(topic: tp.topic)) ?? 0
        let deadline = ContinuousClock.now + .seconds(30)
        var assigned: [KafkaTopicPartition] = []
        while ContinuousClock.now < deadline, assigned.isEmpty {
            _ = try? await member.poll(maxMessages: 100, timeout: .milliseconds(200))  // messages are not stored
            assigned = (try? member.assignment()) ?? []
        }
        // Alone in the group, this member gets every partition of the topic; fewer means workers are running.
        guard partitions > 0, assigned.count >= partitions, assigned.contains(tp) else {
            await member.close()
            let detail = assigned.isEmpty
                ? "the group gave this tool no partitions within 30 s"
                : "other members own \(partitions - assigned.count) of the \(partitions) partitions of \(tp.topic)"
            throw CommandFailure(scaleToZero(settings.group, detail: "the commit was refused and " + detail)
                + " (the dead letter is written; running skip again writes a second copy)")
        }
        do {
            try member.storeOffset(tp, offset: offset + 1)
            try await member.commit()
        } catch {
            await member.close()
            throw CommandFailure(scaleToZero(settings.group, detail: "the commit was refused: \(error)"))
        }
        await member.close()
    }

    private func scaleToZero(_ group: String, detail: String) -> String {
        "cannot commit for group \(group): \(detail). Scale the workers to 0 first (every replica of the group), then run skip again."
    }

    struct Settings {
        var bootstrap: String
        var prefix: String
        var group: String
        var properties: [String: String]
    }

    /// Flags, then the configuration file (with its environment overrides), then the environment, then defaults.
    private func resolveSettings() throws -> Settings {
        let env = ProcessInfo.processInfo.environment
        var fromFile: WorkerConfiguration?
        if let path = config ?? env["PUSHFLEET_CONFIG"] {
            do { fromFile = try WorkerConfiguration.load(path: path) } catch { throw CommandFailure("\(error)") }
        }
        guard let bootstrap = bootstrapServers ?? fromFile?.kafka.bootstrapServers ?? env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or --config, or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        return Settings(
            bootstrap: bootstrap,
            prefix: topicPrefix ?? fromFile?.kafka.topicPrefix ?? env["PUSHFLEET_KAFKA_TOPIC_PREFIX"] ?? TopicNames.defaultPrefix,
            group: group ?? fromFile?.kafka.groupID ?? env["PUSHFLEET_KAFKA_GROUP_ID"] ?? "pushfleet",
            properties: fromFile?.kafka.properties ?? [:])
    }
}
