import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushWorker

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the fleet's state: each lane's lag per topic, what waits on retry tiers and parked topics, the oldest unfinished delivery, open circuits.",
        discussion: """
            Kafka: each lane's group lag on its intake, retry and parked topics (the brokers' reported end offsets \
            against the group's committed offsets). PostgreSQL: unfinished deliveries by status and the oldest one's \
            age. Circuits: read from the workers' /metrics (--metrics, repeatable), since each worker's breakers are \
            its own. Reads only: joins no group, commits nothing.
            """)

    @Option(name: .long, help: "Worker configuration file (JSON): bootstrap servers, topic prefix, groups, database, Kafka properties (env PUSHFLEET_CONFIG).")
    var config: String?

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "A worker's metrics URL (http://host:9464/metrics), repeatable: its open circuits are shown.")
    var metrics: [String] = []

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.status")
        let env = ProcessInfo.processInfo.environment
        var configuration = WorkerConfiguration()
        if let path = config ?? env["PUSHFLEET_CONFIG"] {
            do { configuration = try WorkerConfiguration.load(path: path) } catch { throw CommandFailure("\(error)") }
        }
        guard let servers = bootstrapServers ?? (config != nil ? configuration.kafka.bootstrapServers : env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"]) else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or --config, or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        let topics = configuration.topics
        var status = FleetStatus()
        for lane in Lane.allCases {
            let group = configuration.kafka.groupID(for: lane)
            let reader = try KafkaPartitionReader(bootstrapServers: servers, groupID: group, properties: configuration.kafka.properties,
                                                  logger: logger)
            var entries: [FleetStatus.TopicLag] = []
            for topic in topics.topics(of: lane).all {
                let kind = topic == topics.topics(of: lane).intake ? "intake" : topics.isParkedTopic(topic) ? "parked" : "retry"
                do {
                    entries.append(.init(topic: topic, kind: kind, lag: try await reader.groupLag(topic: topic)))
                } catch {
                    entries.append(.init(topic: topic, kind: kind, lag: nil, error: "\(error)"))
                }
            }
            await reader.close()
            status.lanes.append(.init(lane: lane.rawValue, group: group, topics: entries))
        }
        if let url = databaseURL ?? (config != nil ? configuration.database.url : env["PUSHFLEET_DATABASE_URL"]) {
            let pool = PostgresPool(url: url, size: 1, logger: logger)
            do {
                let backlog = try await LedgerStore(pool: pool).unfinished()
                status.unfinished = backlog.byStatus
                status.oldestUnfinishedSeconds = backlog.oldest.map { max(0, Date().timeIntervalSince($0)) }
            } catch {
                status.databaseError = "\(error)"
            }
            await pool.close()
        }
        for url in metrics {
            do {
                status.circuits += try await Self.openCircuits(at: url)
                status.workersRead += 1
            } catch {
                status.metricsErrors.append("\(url): \(error)")
            }
        }
        say(json ? status.json() : status.text())
    }

    /// The `pushfleet_circuit_state` series not at 0 (closed) in one worker's exposition.
    static func openCircuits(at url: String) async throws -> [FleetStatus.Circuit] {
        guard let endpoint = URL(string: url) else { throw CommandFailure("--metrics \(url) is not a URL") }
        let (data, _) = try await URLSession.shared.data(from: endpoint)
        return FleetStatus.circuits(inExposition: String(decoding: data, as: UTF8.self), worker: url)
    }
}
