import ArgumentParser
import Foundation
import PushCore
import PushKafka
import PushWorker

struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create the fleet's Kafka topics with librdkafka's Admin API (no Apache Kafka tools needed).",
        subcommands: [TopicsCreateCommand.self])
}

struct TopicsCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create whichever of the fleet's topics are missing, with their partition counts and configs.",
        discussion: """
            Idempotent: topics that exist are left alone (one with fewer partitions than asked is \\
            reported). The same layout and defaults as scripts/create-topics.sh: intake, retry \\
            tiers and receipts 7 days, push.dlq 30 days, push.devices compacted; min.insync.replicas \\
            = replication factor − 1 (at least 1).
            """)

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "Topic prefix (kafka.topic_prefix).")
    var topicPrefix = TopicNames.defaultPrefix

    @Option(name: .long, help: "Retry tier names, comma-separated (retry.tiers[].name).")
    var retryTiers = "5s,1m,10m"

    @Option(name: .long, help: "Partitions of the intake, retry, receipts and devices topics (≥ the most workers you will run).")
    var partitions: Int32 = 12

    @Option(name: .long, help: "Partitions of the dead-letter topic.")
    var dlqPartitions: Int32 = 3

    @Option(name: .long, help: "Replication factor.")
    var replicationFactor: Int32 = 3

    @Option(name: .long, help: "min.insync.replicas (default: replication factor − 1, at least 1).")
    var minInsyncReplicas: Int32?

    @Option(name: .long, parsing: .upToNextOption, help: "librdkafka client properties key=value (SASL/TLS).")
    var property: [String] = []

    @Flag(name: .long, help: "Say what would be created; create nothing.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.topics")
        guard let servers = bootstrapServers ?? ProcessInfo.processInfo.environment["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        var layout = TopicLayout()
        layout.prefix = topicPrefix
        layout.tiers = retryTiers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        layout.partitions = partitions
        layout.deadLetterPartitions = dlqPartitions
        layout.replicationFactor = replicationFactor
        layout.minInsyncReplicas = minInsyncReplicas
        if let problem = layout.problem { throw CommandFailure(problem) }
        var properties: [String: String] = [:]
        for item in property {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw CommandFailure("--property \(item): expected key=value") }
            properties[String(parts[0])] = String(parts[1])
        }
        let admin = try KafkaAdmin(bootstrapServers: servers, properties: properties, logger: logger)
        do {
            let plan = layout.plan(existing: try await admin.topics())
            for (name, n) in plan.present { say("exists: \(name) (\(n) partitions)") }
            for (name, n, wanted) in plan.short {
                say("WARNING: \(name) has \(n) partitions, fewer than \(wanted): not changed (add partitions with your Kafka tooling; keys move)")
            }
            for spec in plan.create {
                let configs = spec.configs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                say("\(dryRun ? "would create" : "create"): \(spec.name) (\(spec.partitions) partitions, RF \(spec.replicationFactor), \(configs))")
            }
            if !dryRun, !plan.create.isEmpty {
                let results: [String: String?]
                do {
                    results = try await admin.create(plan.create)
                } catch {
                    throw CommandFailure("the cluster refused CreateTopics: \(error) (a cluster without the Admin API, such as librdkafka's mock cluster, creates topics itself or needs scripts/create-topics.sh)")
                }
                var failed = 0
                for spec in plan.create {
                    if case .some(.some(let problem)) = results[spec.name] {
                        failed += 1
                        say("FAILED: \(spec.name): \(problem)")
                    }
                }
                if failed > 0 { throw ExitCode(1) }
            }
            say(plan.create.isEmpty ? "all \(layout.specs.count) topics exist" : "\(dryRun ? "would create" : "created") \(plan.create.count) of \(layout.specs.count) topics")
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }
}
