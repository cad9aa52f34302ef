import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator
import PushWorker

/// One `bench pipeline` run: sink, mock cluster, migrations, enqueue, worker
/// processes, the wait for PostgreSQL and the committed offsets, the figures.
struct BenchPipelineRun {
    let directory: String
    let databaseURL: String
    let logger: Logger
    let notifications: Int
    let workers: Int
    let partitions: Int32
    let rate: Double?
    /// librdkafka properties written into the workers' `kafka.properties`.
    let kafkaProperties: [String: String]
    /// `worker.max_in_flight`, when set.
    let maxInFlight: Int?
    /// `worker.batch_size`, when set.
    let batchSize: Int?
    /// `worker.poll_linger_ms`, when set.
    let pollLingerMs: Int?
    /// `tls.max_connections_per_host`, when set.
    let connections: Int?
    /// Whether to print pg_stat_statements' costliest statements of the run.
    let pgStatements: Bool
    /// How the publisher makes notification ids.
    let ids: BenchPublisher.IDs
    /// Recipients per message: device tokens, or with `userDevices` user ids.
    var devices = 1
    /// Devices registered for each user id (0: the recipients are tokens).
    var userDevices = 0
    /// Deliveries per message: `notifications / perMessage` messages are published.
    var perMessage: Int { devices * max(1, userDevices) }
    /// `worker.max_deliveries_in_flight` and `worker.max_in_flight_bytes`, when set.
    var maxDeliveriesInFlight: Int?
    var maxInFlightBytes: Int?
    /// The campaign every notification carries, if any.
    var campaign: String?
    /// A fresh app name per run, so counts never include an earlier run's rows.
    let app = "com.pushfleet.bench.r" + String(UInt32.random(in: .min ... .max), radix: 16)
    static let topics = TopicNames()
    static let group = "pushfleet-bench"

    func run(timeout: Duration) async throws -> BenchReport {
        let setup = try BenchSendSetup(provider: .apns, payloadBytes: 0)
        let sink = try await BenchSink.start(directory: directory, credentials: setup.credentials, threads: 1)
        let fleet = WorkerFleet(start: { [self] index in try self.startWorker(index: index) })
        do {
            let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
            try cluster.createFleetTopics(Self.topics, intakePartitions: partitions)
            try writeConfig(setup: setup, sink: sink, bootstrap: cluster.bootstrapServers)
            _ = try await MigrateCommand.migrate(url: databaseURL, migrations: try migrationsToApply(nil), logger: logger)
            if userDevices > 0 { try await registerUsers() }
            if pgStatements { try await BenchStatements.reset(url: databaseURL, logger: logger) }
            say("local stack: kafka \(cluster.bootstrapServers) (\(Self.topics.intake) × \(partitions)), sink pid \(sink.process.processIdentifier), app \(app)")
            let publisher = try await BenchPublisher.prepare(
                app: app, bootstrap: cluster.bootstrapServers, count: notifications / perMessage, devices: devices, users: userDevices > 0, rate: rate, ids: ids,
                campaign: campaign, logger: logger)

            var enqueueSeconds = 0.0
            var produced = 0
            var workStart = ContinuousClock.now
            var workStartDate = Date()
            var publishing: Task<(Int, Double), any Error>?
            let sink0 = sink.cpuSeconds()
            let wal0 = try await walBytes(), ledger0 = try await ledgerBytes()
            let postmaster = try await postmasterPID()
            let postgres0 = postmaster.map { BenchUsage.postgresCPUSecondsByRole(postmaster: $0) } ?? [:], self0 = BenchUsage.selfCPUSeconds()
            if let rate {
                try fleet.launch(count: workers)
                say("started \(workers) worker(s); waiting 8 s for the group to form, then enqueueing at \(Int(rate))/s")
                try await Task.sleep(for: .seconds(8))
                workStart = ContinuousClock.now
                workStartDate = Date()
                publishing = Task { try await publisher.publish() }
            } else {
                (produced, enqueueSeconds) = try await publisher.publish()
                say("enqueued \(produced) messages (\(produced * perMessage) notifications) in \(String(format: "%.1f", enqueueSeconds)) s; starting \(workers) worker(s)")
                workStart = ContinuousClock.now
                workStartDate = Date()
                try fleet.launch(count: workers)
            }
            let (finalSeconds, pollCPU) = try await waitForFinal(start: workStart, timeout: timeout, fleet: fleet)
            if let publishing { (produced, enqueueSeconds) = try await publishing.value }
            // Sample the workers before they stop: CPU and peak RSS (VmHWM is a high-water mark).
            let pids = fleet.processes.map(\.processIdentifier)
            let workerCPU = pids.compactMap { BenchUsage.processCPUSeconds(pid: $0) }.reduce(0, +)
            let workerRoles = pids.map { ThreadCPU.sample(pid: $0)?.byRole ?? [:] }
                .reduce(into: [String: Double]()) { sum, roles in sum.merge(roles, uniquingKeysWith: +) }
            let workerRSS = pids.compactMap { BenchUsage.peakRSSBytes(pid: $0) }.max()
            let sinkCPU = sink.cpuSeconds() - sink0
            var postgresRoles = BenchUsage.difference(postmaster.map { BenchUsage.postgresCPUSecondsByRole(postmaster: $0) } ?? [:], postgres0)
            if postmaster != nil { postgresRoles["backends", default: 0] -= pollCPU }
            let postgresCPU = postgresRoles.values.reduce(0, +)
            let selfCPU = BenchUsage.selfCPUSeconds() - self0
            let wal = try await walBytes() - wal0, ledger = try await ledgerBytes() - ledger0
            let figures = try await readDeliveries()
            if pgStatements { say(try await BenchStatements.top(url: databaseURL, notifications: notifications, logger: logger)) }
            let exitCodes = await fleet.stopAll()
            let committed = try await checkCommitted(bootstrap: cluster.bootstrapServers)
            withExtendedLifetime(cluster) {}
            await sink.stop()

            var report = BenchReport()
            report.add("mode", "mode", text: rate == nil ? "pipeline (enqueue first)" : "pipeline (rate \(Int(rate ?? 0))/s)")
            report.add("machine", "machine", text: BenchUsage.machine())
            report.add("notifications", "notifications", notifications)
            report.add("produced", "produced to Kafka", produced)
            if perMessage > 1 { report.add("devices_per_message", "deliveries per message", perMessage) }
            if userDevices > 0 { report.add("user_devices", "through user ids, devices per user", userDevices) }
            if let campaign { report.add("campaign", "campaign", text: campaign) }
            report.add("final", "final in PostgreSQL", figures.final)
            report.add("accepted", "accepted", figures.latency.count > 0 ? Int(figures.latency.count) : 0)
            report.add("workers", "worker processes", workers)
            report.add("partitions", "partitions", Int(partitions))
            report.add("max_in_flight", "worker.max_in_flight", text: maxInFlight.map { "\($0)" } ?? "default")
            report.add("batch_size", "worker.batch_size", text: batchSize.map { "\($0)" } ?? "default")
            report.add("poll_linger_ms", "worker.poll_linger_ms", text: pollLingerMs.map { "\($0)" } ?? "default")
            report.add("connections", "tls.max_connections_per_host", text: connections.map { "\($0)" } ?? "default")
            report.add("ids", "notification ids", text: ids == .random ? "random (UUID version 4)" : "time-ordered (UUID version 7)")
            report.add("kafka_properties", "workers' extra librdkafka properties",
                       text: kafkaProperties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            report.add("enqueue_seconds", "enqueue time", enqueueSeconds, "%.2f", unit: "s")
            report.add("seconds_to_final", "time to all final", finalSeconds, "%.2f", unit: "s")
            report.add("offsets_committed", "offsets committed to the end (after SIGTERM)", text: committed ? "yes" : "NO")
            let rateFinal = Double(notifications) / finalSeconds
            report.add("rate_per_second", "throughput", rateFinal, "%.0f", unit: "notifications/s")
            // The time to all final includes starting the workers and the group's first
            // rebalance (the coordinator waits 3 s for more members, as Kafka's
            // group.initial.rebalance.delay.ms does); the rate after the first send is
            // what the workers sustain once consuming.
            if let first = figures.firstSend, let last = figures.lastFinal, last > first {
                let label = rate == nil ? "worker start → first send (start, group join)" : "enqueue start → first send"
                report.add("seconds_to_first_send", label, first - workStartDate.timeIntervalSince1970, "%.2f", unit: "s")
                report.add("seconds_sending", "first send → last final", last - first, "%.2f", unit: "s")
                report.add("rate_after_first_send", "throughput after the first send", Double(figures.final) / (last - first),
                           "%.0f", unit: "notifications/s")
            }
            report.add(latency: figures.latency, key: "enqueue_to_accepted", label: "enqueue→accepted")
            report.add(latency: figures.pickup, key: "enqueue_to_first_send", label: "  of which enqueue→first send")
            report.add(latency: figures.send, key: "first_send_to_accepted", label: "  of which first send→accepted")
            report.add("worker_cpu_seconds_per_100k", "worker CPU per 100k", workerCPU * 100_000 / Double(notifications), "%.3f", unit: "s")
            report.add("worker_cpu_cores", "worker CPU (cores busy)", workerCPU / finalSeconds, "%.2f")
            report.add("worker_peak_rss_mb", "worker peak RSS (VmHWM, max)", megabytes(workerRSS), "%.1f", unit: "MB")
            report.add("sink_cpu_seconds", "sink CPU", sinkCPU, "%.3f", unit: "s")
            report.add("worker_us_per_notification", "worker CPU per notification", workerCPU * 1e6 / Double(notifications), "%.1f", unit: "µs")
            report.add(threadRoles: workerRoles, keyPrefix: "worker_us_per_notification_", count: notifications)
            report.add("postgres_cpu_seconds_per_100k", "PostgreSQL server CPU per 100k", postgresCPU * 100_000 / Double(notifications), "%.3f", unit: "s")
            report.add("postgres_us_per_notification", "PostgreSQL server CPU per notification (without the bench's progress polls)",
                       postgresCPU * 1e6 / Double(notifications), "%.1f", unit: "µs")
            for (role, seconds) in postgresRoles.sorted(by: { $0.value > $1.value }) where abs(seconds) >= 0.0005 {
                let key = "postgres_us_per_notification_" + role.replacingOccurrences(of: " ", with: "_")
                report.add(key, "  of which \(role)", seconds * 1e6 / Double(notifications), "%.1f", unit: "µs")
            }
            report.add("postgres_poll_cpu_seconds", "  the progress polls' backend CPU (left out)", pollCPU, "%.3f", unit: "s")
            report.add("wal_bytes_per_notification", "WAL written per notification", Double(wal) / Double(notifications), "%.0f", unit: "bytes")
            report.add("ledger_bytes_per_notification", "ledger on disk per notification (3 tables, indexes)", Double(ledger) / Double(notifications), "%.0f", unit: "bytes")
            report.add("bench_cpu_seconds", "bench process CPU (mock Kafka, publisher, polling)", selfCPU, "%.3f", unit: "s")
            if figures.final < notifications || produced * perMessage < notifications {
                report.warn("only \(figures.final) of \(notifications) final (\(produced) produced): the mock cluster may have dropped data")
            }
            if postmaster == nil { report.warn("PostgreSQL's processes are not on this machine: its CPU figures are not measured (0)") }
            if !committed { report.warn("the group's committed offsets did not reach the end of every partition") }
            if exitCodes.contains(where: { $0 != 0 }) { report.warn("worker exit codes \(exitCodes) (logs in \(directory))") }
            return report
        } catch {
            _ = await fleet.stopAll()
            await sink.stop()
            throw error
        }
    }
}
