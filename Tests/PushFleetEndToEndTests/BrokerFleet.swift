import Foundation
import Logging
import PushPostgres
import PushTestSupport

/// A fleet on a `BrokerUnderTest`: the APNs simulator (answers delayed, so
/// sends are in flight when a worker dies), a migrated database of its own and
/// `pushfleet worker` processes (JSON logs at info, so their rebalances can be
/// read back), all from the `pushfleet` binary, in one working directory.
/// Every process that talks to the broker gets its environment.
final class BrokerFleet {
    static let app = "com.example.fleet"
    static let user = "fleet-user-1"

    let broker: BrokerUnderTest
    let binary: String
    let database: TestDatabase
    let directory: String
    let group: String
    private(set) var simulator: FuzzProcess?
    private(set) var workers: [Worker] = []

    /// A worker process and when it was started.
    struct Worker {
        var process: FuzzProcess
        var name: String
        var started: Date
    }

    init(broker: BrokerUnderTest, binary: String, database: TestDatabase) throws {
        self.broker = broker
        self.binary = binary
        self.database = database
        group = "\(broker.prefix)-fleet"
        directory = NSTemporaryDirectory() + "e2e-broker-\(broker.kind.rawValue)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Runs `body` on a fleet of its own on broker `kind` (topics named `<prefix><random>.*`)
    /// with a database of its own, then stops everything; a failure keeps the logs and prints
    /// the workers' last lines.
    static func run(on kind: BrokerUnderTest.Kind, prefix: String, _ body: (BrokerFleet) async throws -> Void) async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let broker = try BrokerUnderTest(kind, prefix: "\(prefix)\(UInt32.random(in: 0...UInt32.max))")
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        let fleet = try BrokerFleet(broker: broker, binary: binary, database: database)
        do {
            try await body(fleet)
        } catch {
            print("\(prefix) on \(kind): failed; logs kept in \(fleet.directory)")
            for worker in fleet.workers { print("\(worker.name):\n\(worker.process.log.suffix(3000))") }
            await fleet.stopAll(keepDirectory: true)
            await database.drop(logger: logger)
            throw error
        }
        // BROKER_DRILL_KEEP=1 keeps the logs of a run that passed too.
        let keep = ProcessInfo.processInfo.environment["BROKER_DRILL_KEEP"] == "1"
        if keep { print("\(prefix) on \(kind): logs kept in \(fleet.directory)") }
        await fleet.stopAll(keepDirectory: keep)
        await database.drop(logger: logger)
    }

    /// Starts the broker (and its topics), the simulator and the database; no worker yet.
    func start(apnsDelayMilliseconds: Int) async throws {
        try await broker.start(binary: binary, directory: directory)
        try await files.shell("""
            openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out apns.p8 \
            && openssl ec -in apns.p8 -pubout -out apns.pub 2>/dev/null
            """)
        let port = try FuzzStack.freePort()
        try files.write("simulator.json", files.json([
            "port": port,
            "apnsKeys": [["keyID": "FLEETKEY01", "teamID": "FLEETTEAM1", "publicKeyPEM": try files.read("apns.pub"), "topics": [Self.app]]],
            "apnsTokenUpdateAllowance": 100,
            "scenarios": [["provider": "apns", "fault": ["delay": ["milliseconds": apnsDelayMilliseconds]]]],
        ]))
        simulator = try FuzzProcess(name: "simulator", binary, [
            "simulate", "--config", directory + "/simulator.json", "--ca-out", directory + "/ca.pem",
            "--stats-json", directory + "/simulator-stats.json", "--log-level", "warning",
        ], logPath: directory + "/simulator.log")
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: directory + "/ca.pem"), ContinuousClock.now < deadline, simulator?.exited() == nil {
            try await Task.sleep(for: .milliseconds(100))
        }
        guard FileManager.default.fileExists(atPath: directory + "/ca.pem") else {
            throw TestFailure("simulator did not start:\n\(simulator?.log.suffix(2000) ?? "")")
        }
        let migrate = try await TestEnvironment.run(binary, ["migrate", "--database-url", database.url], timeout: .seconds(120))
        guard migrate.status == 0 else { throw TestFailure("migrate failed: \(migrate.output)") }
        // A killed worker's partitions move after 6 s instead of librdkafka's 45 s default.
        // BROKER_DRILL_KAFKA_PROPERTIES (a JSON object) adds or overrides properties, to try settings.
        var properties = ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500"]
        if let extra = ProcessInfo.processInfo.environment["BROKER_DRILL_KAFKA_PROPERTIES"],
           let object = try JSONSerialization.jsonObject(with: Data(extra.utf8)) as? [String: String] {
            properties.merge(object) { $1 }
        }
        try files.write("worker.json", files.json([
            "kafka": ["bootstrap_servers": broker.bootstrap, "group_id": group, "topic_prefix": broker.prefix,
                      "properties": properties],
            "database": ["url": database.url, "pool_size": 2],
            "tls": ["ca_bundle": directory + "/ca.pem"],
            "observability": ["listen": "127.0.0.1:0"],
            "logging": ["format": "json", "level": ProcessInfo.processInfo.environment["BROKER_DRILL_LOG_LEVEL"] ?? "info"],
            "apps": [Self.app: ["apns": ["topic": Self.app, "team_id": "FLEETTEAM1", "key_id": "FLEETKEY01",
                                         "key_path": directory + "/apns.p8", "base_url": "https://127.0.0.1:\(port)"]]],
        ]))
    }

    /// Starts one more worker.
    @discardableResult
    func startWorker() throws -> Worker {
        let name = "worker-\(workers.count + 1)"
        let process = try FuzzProcess(
            name: name, binary, ["worker", "--config", directory + "/worker.json"], logPath: directory + "/\(name).log",
            environment: broker.environment.merging(["PUSHFLEET_EXIT_WITH_PARENT": "1", "PUSHFLEET_WORKER_ID": name]) { $1 })
        let worker = Worker(process: process, name: name, started: Date())
        workers.append(worker)
        return worker
    }

    /// Publishes JSON lines to `topic` (default: the intake) with `pushfleet enqueue`.
    func publish(_ lines: [String], topic: String? = nil) async throws {
        let file = directory + "/publish-\(UUID().uuidString).jsonl"
        try files.write(String(file.split(separator: "/").last ?? ""), lines.joined(separator: "\n") + "\n")
        var arguments = ["enqueue", "--bootstrap-servers", broker.bootstrap, "--topic-prefix", broker.prefix, "--log-level", "warning"]
        if let topic { arguments += ["--topic", topic, "--allow-invalid"] }
        let run = try await broker.run(binary, arguments, stdin: file, timeout: .seconds(60))
        guard run.status == 0 else { throw TestFailure("enqueue to \(topic ?? "intake") failed (exit \(run.status)): \(run.output)") }
    }

    /// `count` notifications, each to one iOS device token of its own.
    static func notifications(_ count: Int, wave: Int) -> (ids: [UUID], lines: [String]) {
        let created = ISO8601DateFormatter().string(from: Date())
        var ids: [UUID] = [], lines: [String] = []
        for n in 0..<count {
            let id = UUID()
            ids.append(id)
            lines.append("""
                {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "\(app)", "created_at": "\(created)", \
                "recipients": [{"token": "\(token(wave: wave, n: n))", "platform": "ios"}], "alert": {"title": "wave \(wave)", "body": "n \(n)"}}
                """)
        }
        return (ids, lines)
    }

    static func token(wave: Int, n: Int) -> String {
        String(format: "%08x%056x", wave, n)
    }

    /// Waits until every delivery of `ids` is final; returns how many are.
    func waitFinal(_ ids: [UUID], timeout: Duration) async throws -> Int {
        try await waitFor("SELECT count(*) AS n FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND status NOT IN ('pending', 'retrying')",
                          [.uuidArray(ids)], count: ids.count, timeout: timeout)
    }

    /// Polls the count `query` returns (column `n`) until it reaches `count` or `timeout`; returns the last.
    func waitFor(_ query: String, _ parameters: [PostgresValue], count: Int, timeout: Duration) async throws -> Int {
        let c = try await PostgresConnection.connect(url: database.url, logger: Self.logger)
        defer { c.close() }
        let deadline = ContinuousClock.now + timeout
        var n = 0
        while ContinuousClock.now < deadline {
            n = try await c.query(query, parameters).rows.first?.count("n") ?? 0
            if n >= count { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        return n
    }

    /// Stops every worker still running (SIGTERM) and returns the exit codes of all, in order
    /// (a worker killed with SIGKILL reports 137).
    func stopWorkers() async -> [Int32] {
        var codes: [Int32] = []
        for worker in workers { codes.append(await worker.process.stop()) }
        return codes
    }

    /// Stops the simulator and returns the APNs `apns-id`s it processed more than once.
    func stopSimulator() async throws -> Int {
        _ = await simulator?.stop(grace: .seconds(10))
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/simulator-stats.json"))
        let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let byID = stats?["apnsSendsByID"] as? [String: Int] ?? [:]
        return byID.values.filter { $0 > 1 }.count
    }

    func stopAll(keepDirectory: Bool) async {
        for worker in workers { _ = await worker.process.stop(grace: .seconds(10)) }
        _ = await simulator?.stop(grace: .seconds(5))
        await broker.stop()
        if !keepDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The rebalances every worker logged so far, in time order.
    func rebalances() -> [RebalanceTimeline.Event] {
        RebalanceTimeline.events(workers.map { ($0.name, $0.process.log) }, group: group)
    }

    /// The longest revoke drain any worker logged so far (seconds).
    func longestRevokeDrain() -> Double {
        RebalanceTimeline.revokeDrains(workers.map { ($0.name, $0.process.log) }, group: group).max() ?? 0
    }

    static var logger: Logger {
        var l = Logger(label: "e2e.broker")
        l.logLevel = .warning
        return l
    }

    private var files: WorkDirectory { WorkDirectory(path: directory) }
}
