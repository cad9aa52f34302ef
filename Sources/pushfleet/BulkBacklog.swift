import Foundation
import Logging
import PushCore
import PushKafka
import PushWorker

/// The bulk lane's backlog for `campaign status`: messages on its intake,
/// retry and parked topics past what its consumer group committed (all
/// campaigns: Kafka does not know which message is whose).
enum BulkBacklog {
    /// nil when no Kafka is configured; the sum over every partition of
    /// (end - committed), or (end - start) where the group committed nothing.
    static func messages(configuration: WorkerConfiguration?, bootstrapServers: String?, logger: Logger) async throws -> Int? {
        let env = ProcessInfo.processInfo.environment
        guard let bootstrap = bootstrapServers ?? configuration?.kafka.bootstrapServers ?? env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            return nil
        }
        let topics = configuration?.topics ?? TopicNames(prefix: env["PUSHFLEET_KAFKA_TOPIC_PREFIX"] ?? TopicNames.defaultPrefix)
        let group = configuration?.kafka.groupID(for: .bulk) ?? (env["PUSHFLEET_KAFKA_GROUP_ID"] ?? "pushfleet") + ".bulk"
        let properties = configuration?.kafka.properties ?? [:]
        let admin = try KafkaAdmin(bootstrapServers: bootstrap, properties: properties, logger: logger)
        let partitions = try await admin.topics()
        await admin.close()
        let reader = try KafkaPartitionReader(bootstrapServers: bootstrap, groupID: group, properties: properties, logger: logger)
        do {
            var total = 0
            for topic in topics.topics(of: .bulk).all {
                for partition in 0..<(partitions[topic] ?? 0) {
                    let tp = KafkaTopicPartition(topic: topic, partition: Int32(clamping: partition))
                    let range = try await reader.reportedRange(tp)
                    let from = try await reader.committedOffset(tp) ?? range.start
                    total += Int(clamping: max(0, range.end - max(from, range.start)))
                }
            }
            await reader.close()
            return total
        } catch {
            await reader.close()
            throw error
        }
    }
}
