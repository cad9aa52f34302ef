import ArgumentParser
import Foundation
import PushCore

/// `pushfleet bench pipeline`: the whole path on the local stack. Enqueues N
/// notifications into the mock Kafka cluster first (or at `--rate` per second
/// while the workers run), starts W `pushfleet worker` processes and times
/// until every delivery is final in PostgreSQL and the group's committed
/// offsets reach the end of the topic.
struct BenchPipelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Kafka → worker processes → fast sink → PostgreSQL; needs PUSHFLEET_DATABASE_URL (scripts/with-postgres.sh).")

    @Option(name: .long, help: "Notifications to enqueue (one iOS device each).")
    var notifications = 100_000

    @Option(name: .long, help: "Recipients per message (a campaign message; at most 1,000): device tokens, or user ids with --user-devices.")
    var devices: Int = 1

    @Option(name: .long, help: "Make each recipient a user id with this many registered devices (registered in PostgreSQL before the run).")
    var userDevices: Int = 0

    @Option(name: .long, help: "Tag every notification with this campaign (its rows then carry it and its index is kept).")
    var campaign: String?

    @Option(name: .long, help: "worker.max_deliveries_in_flight of the workers (default: the worker's own, 20,000).")
    var maxDeliveriesInFlight: Int?

    @Option(name: .long, help: "worker.max_in_flight_bytes of the workers (default: the worker's own, 32 MiB).")
    var maxInFlightBytes: Int?

    @Option(name: .long, help: "Worker processes.")
    var workers = 1

    @Option(name: .long, help: "Enqueue at this many notifications per second while the workers run (default: all first).")
    var rate: Double?

    @Option(name: .long, help: "Partitions of push.notifications (default: enough for the mock cluster's ~5 MiB per partition; 4 with --rate).")
    var partitions: Int32?

    @Option(name: .customLong("kafka-property"), help: ArgumentHelp(
        "Extra librdkafka consumer property for the workers, KEY=VALUE (repeatable).",
        valueName: "key=value"))
    var kafkaProperties: [String] = []

    @Option(name: .long, help: "worker.max_in_flight of the workers (default: the worker's own, 1,024).")
    var maxInFlight: Int?

    @Option(name: .long, help: "worker.batch_size of the workers (default: the worker's own, 512).")
    var batchSize: Int?

    @Option(name: .long, help: "worker.poll_linger_ms of the workers (default: the worker's own, 5).")
    var pollLingerMs: Int?

    @Option(name: .long, help: "tls.max_connections_per_host of the workers (default: the worker's own, 2).")
    var connections: Int?

    @Option(name: .long, help: ArgumentHelp(
        "Notification ids: random (UUID version 4, as most producers make them) or time-ordered (UUID version 7).",
        valueName: "random|time-ordered"))
    var ids: BenchPublisher.IDs = .random

    @Flag(name: .long, help: "Print the statements that cost PostgreSQL most (pg_stat_statements; run under PUSHFLEET_PG_CONF=\"shared_preload_libraries = 'pg_stat_statements'\").")
    var pgStatements = false

    @Option(name: .long, help: "Give up after this many seconds.")
    var timeout = 900

    @Option(name: .long, help: "PostgreSQL URL (default: env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Write the figures as JSON to this file.")
    var json: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard notifications > 0, workers > 0 else { throw ValidationError("--notifications and --workers must be positive") }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        guard (1...1_000).contains(devices), (0...1_000).contains(userDevices), devices * max(1, userDevices) <= 10_000,
              notifications % (devices * max(1, userDevices)) == 0 else {
            throw ValidationError("--devices must be 1...1000, --user-devices 0...1000, their product at most 10,000 (a message's "
                                  + "fan-out through user ids) and a divisor of --notifications")
        }
        if let campaign, let problem = Campaign.problem(campaign) { throw ValidationError("--campaign \(problem)") }
        if let maxInFlight, maxInFlight <= 0 { throw ValidationError("--max-in-flight must be positive") }
        if let batchSize, !(1...10_000).contains(batchSize) { throw ValidationError("--batch-size must be 1...10000") }
        if let pollLingerMs, !(0...1_000).contains(pollLingerMs) { throw ValidationError("--poll-linger-ms must be 0...1000") }
        if let connections, connections <= 0 { throw ValidationError("--connections must be positive") }
        for p in kafkaProperties where p.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first?.isEmpty != false
            || !p.contains("=") {
            throw ValidationError("--kafka-property \(p): expected KEY=VALUE")
        }
    }

    func run() async throws {
        let logger = common.makeLogger("pushfleet.bench")
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or run under scripts/with-postgres.sh (PUSHFLEET_DATABASE_URL)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let partitionCount = partitions ?? Self.defaultPartitions(notifications: notifications, paced: rate != nil)
        let run = BenchPipelineRun(directory: directory, databaseURL: url, logger: logger,
                                   notifications: notifications, workers: workers, partitions: partitionCount, rate: rate,
                                   kafkaProperties: Self.properties(kafkaProperties), maxInFlight: maxInFlight,
                                   batchSize: batchSize, pollLingerMs: pollLingerMs, connections: connections,
                                   pgStatements: pgStatements, ids: ids, devices: devices, userDevices: userDevices,
                                   maxDeliveriesInFlight: maxDeliveriesInFlight, maxInFlightBytes: maxInFlightBytes, campaign: campaign)
        let report = try await run.run(timeout: .seconds(timeout))
        say(report.table(title: "pushfleet bench pipeline"))
        if let json { try report.writeJSON(to: json) }
        say("worker logs in \(directory)")
    }

    /// Enqueue-first: the whole run must fit the mock cluster's log, which keeps
    /// ~5 MiB per partition (about 400 bytes a message). Paced: the workers keep up,
    /// so the log only holds the backlog, and fewer partitions matter more. The mock
    /// broker finds a fetch's offset by walking the partition's message sets from the
    /// oldest (librdkafka 2.0.2's `rd_kafka_mock_msgset_find`; a real broker uses an
    /// index), and a paced producer lingering 5 ms writes a message set per partition
    /// per few messages: with 17 partitions at 4,000/s the walk took a quarter of a core
    /// by the end of a 100k run, which the workers' latency then paid for. Four
    /// partitions make each set ~4× bigger and the walk ~4× shorter, and still hold
    /// ~50,000 messages of backlog.
    static func defaultPartitions(notifications: Int, paced: Bool) -> Int32 {
        paced ? 4 : Int32(max(6, min(512, notifications / 6_000 + 1)))
    }

    static func properties(_ pairs: [String]) -> [String: String] {
        var properties = MockBrokerFetch.properties
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            properties[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return properties
    }
}

extension BenchPublisher.IDs: ExpressibleByArgument {}
