import Foundation
import PushCore
import PushKafka

/// The fleet's Kafka topics as `pushfleet topics create` (and
/// `scripts/create-topics.sh`, which states the same defaults) makes them:
/// the intake, one topic per retry tier, the dead-letter topic, receipts and
/// the compacted device registry, each with its retention.
public struct TopicLayout: Sendable, Equatable {
    public var prefix = TopicNames.defaultPrefix
    public var tiers: [String] = RetryTier.defaults.map(\.name)
    /// Intake, retry tiers, receipts, devices: at least the most workers you will run.
    public var partitions: Int32 = 12
    public var deadLetterPartitions: Int32 = 3
    public var replicationFactor: Int32 = 3
    /// nil: replication factor − 1, at least 1.
    public var minInsyncReplicas: Int32?

    public init() {}

    static let day: Int64 = 86_400_000

    /// The topics, in creation order.
    public var specs: [KafkaTopicSpec] {
        let isr = minInsyncReplicas ?? max(1, replicationFactor - 1)
        func topic(_ name: String, _ partitions: Int32, _ configs: [String: String]) -> KafkaTopicSpec {
            KafkaTopicSpec(name: name, partitions: partitions, replicationFactor: replicationFactor,
                           configs: configs.merging(["min.insync.replicas": String(isr)]) { a, _ in a })
        }
        func deleting(days: Int64) -> [String: String] { ["retention.ms": String(days * Self.day), "cleanup.policy": "delete"] }
        let names = TopicNames(prefix: prefix, tiers: [])
        var specs = [topic(names.intake, partitions, deleting(days: 7))]
        specs += tiers.map { topic(TopicNames.retryTopic(prefix: prefix, tierName: $0), partitions, deleting(days: 7)) }
        specs.append(topic(names.deadLetter, deadLetterPartitions, deleting(days: 30)))
        specs.append(topic(names.receipts, partitions, deleting(days: 7)))
        specs.append(topic(names.devices, partitions, ["cleanup.policy": "compact", "min.compaction.lag.ms": "3600000"]))
        return specs
    }

    /// What is wrong with the layout, if anything.
    public var problem: String? {
        if partitions < 1 || deadLetterPartitions < 1 { return "partition counts must be at least 1" }
        if replicationFactor < 1 { return "the replication factor must be at least 1" }
        if let isr = minInsyncReplicas, !(1...replicationFactor).contains(isr) {
            return "min.insync.replicas must be 1...\(replicationFactor)"
        }
        if tiers.isEmpty { return "at least one retry tier is needed" }
        return nil
    }

    /// What creating the layout on a cluster that has `existing` topics does.
    public struct Plan: Sendable, Equatable {
        public var create: [KafkaTopicSpec] = []
        /// Topics that exist already, with their partition count.
        public var present: [(name: String, partitions: Int)] = []
        /// Present topics with fewer partitions than the layout asks (not changed: say so).
        public var short: [(name: String, partitions: Int, wanted: Int32)] = []

        public static func == (a: Plan, b: Plan) -> Bool {
            a.create == b.create && a.present.map(\.name) == b.present.map(\.name) && a.short.map(\.name) == b.short.map(\.name)
        }
    }

    public func plan(existing: [String: Int]) -> Plan {
        var plan = Plan()
        for spec in specs {
            if let n = existing[spec.name] {
                plan.present.append((spec.name, n))
                if n < Int(spec.partitions) { plan.short.append((spec.name, n, spec.partitions)) }
            } else {
                plan.create.append(spec)
            }
        }
        return plan
    }
}
