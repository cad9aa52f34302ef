import Foundation
import PushCore
import PushKafka
import PushPostgres

extension BenchPipelineRun {
    func writeConfig(setup: BenchSendSetup, sink: BenchSink, bootstrap: String) throws {
        let settings: [(String, Int?)] = [
            ("max_in_flight", maxInFlight), ("batch_size", batchSize), ("poll_linger_ms", pollLingerMs),
            ("max_deliveries_in_flight", maxDeliveriesInFlight), ("max_in_flight_bytes", maxInFlightBytes),
        ]
        let workerSettings: [(String, JSONValue)] = settings.compactMap { key, value in value.map { (key, JSONValue.int(Int64($0))) } }
        let keyPath = directory + "/AuthKey_\(setup.credentials.apnsKeyID).p8"
        try Data(setup.apnsPrivateKeyPEM.utf8).write(to: URL(fileURLWithPath: keyPath), options: .atomic)
        let config: JSONValue = .object([
            ("kafka", .object([
                ("bootstrap_servers", .string(bootstrap)), ("group_id", .string(Self.group)), ("topic_prefix", .string(Self.topics.prefix)),
                ("properties", .object(kafkaProperties.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ])),
            ("database", .object([("url", .string(databaseURL)), ("pool_size", .int(4))])),
            ("worker", .object(workerSettings)),
            ("tls", .object([("ca_bundle", .string(sink.caPath))]
                + (connections.map { [("max_connections_per_host", JSONValue.int(Int64($0)))] } ?? []))),
            ("observability", .object([("listen", .string("127.0.0.1:0"))])),
            ("logging", .object([("format", .string("text"))])),
            ("apps", .object([
                (app, .object([
                    ("apns", .object([
                        ("topic", .string(app)), ("team_id", .string(setup.credentials.apnsTeamID)),
                        ("key_id", .string(setup.credentials.apnsKeyID)), ("key_path", .string(keyPath)),
                        ("base_url", .string(sink.baseURL)),
                    ])),
                ])),
            ])),
        ])
        try Data(config.encoded()).write(to: URL(fileURLWithPath: directory + "/worker.json"), options: .atomic)
    }

    func startWorker(index: Int) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = ["worker", "--config", directory + "/worker.json"]
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("PUSHFLEET_") { env[key] = nil }
        env["PUSHFLEET_WORKER_ID"] = "bench-worker-\(index)"
        env["PUSHFLEET_EXIT_WITH_PARENT"] = "1"
        env["PUSHFLEET_LOG_LEVEL"] = ProcessInfo.processInfo.environment["PUSHFLEET_LOG_LEVEL"] ?? "warning"
        process.environment = env
        let logPath = directory + "/worker-\(index).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        return process
    }

    /// The server's postmaster: the parent of a backend of ours, nil when the
    /// server's processes are not on this machine (its CPU is then not measured).
    func postmasterPID() async throws -> Int32? {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let backend = try await connection.query("SELECT pg_backend_pid()::bigint AS pid", []).rows.first?.count("pid")
        return backend.flatMap { BenchUsage.parentPID(of: Int32(clamping: $0)) }
    }

    /// `--user-devices`: registers the users the messages name (`u0`, `u1`, …,
    /// `devices` per message) with `userDevices` iOS devices each, before
    /// the clock starts.
    func registerUsers() async throws {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let users = notifications / perMessage * devices
        _ = try await connection.query(
            """
            INSERT INTO devices (app, platform, token, user_id, environment)
            SELECT $1, 'ios', lpad(to_hex(u), 16, '0') || lpad(to_hex(d), 48, '0'), 'u' || u, 'production'
              FROM generate_series(0, $2::int8 - 1) AS u, generate_series(0, $3::int8 - 1) AS d
            """, [.text(app), .int(Int64(users)), .int(Int64(userDevices))])
        say("registered \(users) users with \(userDevices) devices each")
    }

    /// Polls PostgreSQL until every delivery of this run is final; returns the
    /// seconds since `start`. The count scans the run's rows, so it is not
    /// free for the server the workers write to: the next poll comes after
    /// half the time the rest should take at the rate so far (100 ms to 2 s),
    /// which keeps the end exact to ~100 ms while polling ~10x less. Also
    /// returns the CPU seconds the polls cost the server (their backend's,
    /// read from /proc), which the report leaves out of PostgreSQL's figure.
    func waitForFinal(start: ContinuousClock.Instant, timeout: Duration, fleet: WorkerFleet) async throws -> (seconds: Double, pollCPUSeconds: Double) {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let backend = try await connection.query("SELECT pg_backend_pid()::bigint AS pid", []).rows.first?.count("pid")
        let backendPID = backend.map { Int32(clamping: $0) }
        let poll0 = backendPID.flatMap { BenchUsage.processCPUSeconds(pid: $0) } ?? 0
        var lastPrinted = start
        while true {
            let rows = try await connection.query(
                "SELECT count(*) AS n FROM deliveries WHERE app = $1 AND status NOT IN ('pending', 'retrying')", [.text(app)])
            let final = rows.rows.first?.count("n") ?? 0
            let now = ContinuousClock.now
            if final >= notifications {
                let poll1 = backendPID.flatMap { BenchUsage.processCPUSeconds(pid: $0) } ?? poll0
                return ((now - start).seconds, poll1 - poll0)
            }
            if now - lastPrinted >= .seconds(5) {
                say("  final \(final) / \(notifications) after \(format(now - start))")
                lastPrinted = now
            }
            if now - start > timeout { throw CommandFailure("timed out with \(final)/\(notifications) final (logs in \(directory))") }
            if !fleet.anyRunning { throw CommandFailure("every worker exited before the work was done (logs in \(directory))") }
            let elapsed = (now - start).seconds
            let rate = elapsed > 0 ? Double(final) / elapsed : 0
            let expected = rate > 0 ? Double(notifications - final) / rate : 1
            try await Task.sleep(for: .milliseconds(Int(min(2000, max(100, expected * 500)))))
        }
    }

    /// After the workers stopped: whether the group's committed offsets
    /// equal the high watermarks of every partition (waits up to 30 s).
    /// librdkafka's consumer must subscribe to read a group's offsets, and a
    /// member that never polls would stall the running workers' rebalance,
    /// so this runs only once the group is empty.
    func checkCommitted(bootstrap: String) async throws -> Bool {
        // The range assignor: librdkafka 2.0.2 asserts when a cooperative-sticky
        // consumer that never got an assignment is closed.
        let consumer = try KafkaConsumer(
            bootstrapServers: bootstrap, groupID: Self.group, topics: [Self.topics.intake],
            properties: ["partition.assignment.strategy": "range"], logger: logger)
        do {
            let done = try await waitForCommitted(consumer)
            await consumer.close(timeout: .seconds(5))
            return done
        } catch {
            await consumer.close(timeout: .seconds(5))
            throw error
        }
    }

    private func waitForCommitted(_ consumer: KafkaConsumer) async throws -> Bool {
        let tps = (0..<partitions).map { KafkaTopicPartition(topic: Self.topics.intake, partition: $0) }
        var ends: [KafkaTopicPartition: Int64] = [:]
        for tp in tps { ends[tp] = try await consumer.watermarks(tp).high }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            // A fresh consumer may time out while it finds the group coordinator: ask again.
            if let committed = try? await consumer.committed(tps, timeout: .seconds(10)),
               tps.allSatisfy({ (committed[$0] ?? 0) >= (ends[$0] ?? 0) }) {
                return true
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// What PostgreSQL holds about this run's deliveries.
    struct DeliveryFigures {
        var final = 0
        /// enqueue→accepted, and its two parts: enqueue→first send (Kafka,
        /// polling, ledger check) and first send→accepted (the provider request).
        var latency = BenchLatency(), pickup = BenchLatency(), send = BenchLatency()
        /// The earliest first attempt and the latest final outcome (seconds
        /// since 1970, the workers' clock, which is this machine's).
        var firstSend: Double?, lastFinal: Double?
    }

    /// The server's WAL position in bytes (`pg_current_wal_lsn`), for WAL written per notification.
    func walBytes() async throws -> Int64 {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let rows = try await connection.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint::text AS b", [])
        return rows.rows.first?["b"].flatMap { Int64($0) } ?? 0
    }

    /// Bytes on disk (heap, indexes, TOAST) of the ledger's three tables,
    /// every partition included: what a run leaves behind per notification.
    func ledgerBytes() async throws -> Int64 {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let rows = try await connection.query(
            """
            SELECT sum(pg_total_relation_size(relid))::bigint::text AS b
            FROM (SELECT relid FROM pg_partition_tree('deliveries') UNION ALL
                  SELECT relid FROM pg_partition_tree('delivery_attempt_log') UNION ALL
                  SELECT 'notification_ids'::regclass) t
            """, [])
        return rows.rows.first?["b"].flatMap { Int64($0) } ?? 0
    }

    /// Final count, latencies and the span from the first send to the last final outcome.
    func readDeliveries() async throws -> DeliveryFigures {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let rows = try await connection.query(
            """
            SELECT (extract(epoch FROM accepted_at - enqueued_at) * 1000000)::bigint AS us,
                   (extract(epoch FROM first_attempt_at - enqueued_at) * 1000000)::bigint AS pickup_us,
                   (extract(epoch FROM accepted_at - first_attempt_at) * 1000000)::bigint AS send_us
            FROM deliveries WHERE app = $1 AND accepted_at IS NOT NULL AND enqueued_at IS NOT NULL
            """, [.text(app)])
        var figures = DeliveryFigures()
        for row in rows.rows {
            if let us = row["us"].flatMap({ Int64($0) }) { figures.latency.record(microseconds: us) }
            if let us = row["pickup_us"].flatMap({ Int64($0) }) { figures.pickup.record(microseconds: us) }
            if let us = row["send_us"].flatMap({ Int64($0) }) { figures.send.record(microseconds: us) }
        }
        let summary = try await connection.query(
            """
            SELECT count(*) FILTER (WHERE status NOT IN ('pending', 'retrying')) AS n,
                   extract(epoch FROM min(first_attempt_at))::text AS first_send,
                   extract(epoch FROM max(final_at))::text AS last_final
            FROM deliveries WHERE app = $1
            """, [.text(app)])
        let row = summary.rows.first
        figures.final = row?.count("n") ?? 0
        figures.firstSend = row?["first_send"].flatMap { Double($0) }
        figures.lastFinal = row?["last_final"].flatMap { Double($0) }
        return figures
    }
}
