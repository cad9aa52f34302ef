import Foundation
import Logging
import PushCore
import PushPostgres
import PushTestSupport

/// A child process whose log outlives it and whose exit can be checked
/// without stopping it (the fuzz tier asserts that no worker exits mid-run).
final class FuzzProcess {
    let name: String
    let pid: pid_t
    let logPath: String
    private var exitStatus: Int32?

    init(name: String, _ path: String, _ arguments: [String], logPath: String, environment: [String: String] = [:]) throws {
        self.name = name
        self.logPath = logPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The arguments and `environment` are the truth (as BackgroundProcess does).
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHFLEET_") }
        for (k, v) in environment { env[k] = v }
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestFailure("cannot start \(name): errno \(spawned)") }
        self.pid = pid
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self) }

    /// The exit status (128+signal when killed) if the process has ended, else nil.
    func exited() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        guard r == pid else { return r < 0 ? -1 : nil }
        exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return exitStatus
    }

    /// SIGTERM, then SIGKILL after `grace`; the exit status.
    func stop(grace: Duration = .seconds(30)) async -> Int32 {
        if let done = exited() { return done }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        var killed = false
        while true {
            if let done = exited() { return done }
            if ContinuousClock.now > deadline, !killed {
                kill(pid, SIGKILL)
                killed = true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// The fuzz tier's stack: the mock cluster (3 brokers), the APNs/FCM
/// simulator, a migrated database and N `pushfleet worker` processes, all
/// from the `pushfleet` binary, in one working directory. The campaign tests
/// run on it too (even workers, the simulator's request log).
final class FuzzStack {
    static let app = "com.example.shop"
    /// Partitions per topic for a corpus of `hostile` messages: the mock cluster keeps only
    /// ~5 MiB per partition, so a bigger run (FUZZ_MESSAGES) gets more partitions.
    static func topicPartitions(hostile: Int) -> [(String, Int)] {
        let scale = max(1, (hostile + 1_999) / 2_000)
        let names = TopicNames()
        let intakes = Set(Lane.allCases.map { names.topics(of: $0).intake })
        return names.all.map { ($0, (intakes.contains($0) ? 12 : $0 == names.deadLetter ? 6 : 4) * scale) }
    }

    let topicPartitions: [(String, Int)]

    let directory: String
    let binary: String
    let database: TestDatabase
    private(set) var bootstrap = ""
    private(set) var kafka: FuzzProcess?
    private(set) var simulator: FuzzProcess?
    private(set) var workers: [FuzzProcess] = []

    /// The simulator's port, chosen before the corpus is made: the examples'
    /// browser subscriptions are pointed at it (`webOrigin`).
    let simulatorPort: Int
    var webOrigin: String { "https://127.0.0.1:\(simulatorPort)" }
    static let hmsAppID = "104937261"

    init(binary: String, database: TestDatabase, hostile: Int) throws {
        topicPartitions = Self.topicPartitions(hostile: hostile)
        simulatorPort = try Self.freePort()
        self.binary = binary
        self.database = database
        directory = NSTemporaryDirectory() + "e2e-fuzz-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The simulator writes what it answered here when it stops (`simulate --stats-json`).
    var simulatorStatsPath: String { directory + "/simulator-stats.json" }

    /// Starts the stack. `tightFirst`: worker 0 runs with tight memory bounds
    /// (the fuzz tier's). `simulatorSettings` are added to the simulator's
    /// configuration file (e.g. `requestLog`), `workerSettings` to the plain
    /// workers' `worker` section.
    func start(workerCount: Int, tightFirst: Bool = true, simulatorSettings: [String: Any] = [:],
               workerSettings: [String: Any] = [:]) async throws {
        let topics = topicPartitions.flatMap { ["--topic", "\($0.0):\($0.1)"] }
        kafka = try FuzzProcess(name: "mock-kafka", binary, ["mock-kafka", "--brokers", "3", "--bootstrap-file", directory + "/bootstrap",
                                                              "--log-level", "warning"] + topics, logPath: directory + "/mock-kafka.log")
        let deadline = ContinuousClock.now + .seconds(30)
        while bootstrap.isEmpty, ContinuousClock.now < deadline {
            bootstrap = (try? String(contentsOfFile: directory + "/bootstrap", encoding: .utf8)) ?? ""
            if kafka?.exited() != nil { break }
            if bootstrap.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard !bootstrap.isEmpty else { throw TestFailure("mock-kafka did not start:\n\(kafka?.log.suffix(2000) ?? "")") }

        try await files.shell("""
            openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out apns.p8 \
            && openssl ec -in apns.p8 -pubout -out apns.pub 2>/dev/null \
            && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out fcm.pem 2>/dev/null \
            && openssl pkey -in fcm.pem -pubout -out fcm.pub
            """)
        let port = simulatorPort
        let apnsPublic = try files.read("apns.pub"), fcmPublic = try files.read("fcm.pub"), fcmPrivate = try files.read("fcm.pem")
        let email = "fuzz@pushfleet-fuzz.iam.gserviceaccount.com"
        let simulatorConfig: [String: Any] = [
            "port": port,
            "apnsKeys": [["keyID": "FUZZKEY001", "teamID": "FUZZTEAM01", "publicKeyPEM": apnsPublic, "topics": [String]()]],
            "fcmAccounts": [["clientEmail": email, "privateKeyID": "fuzzkey", "projectID": "pushfleet-fuzz", "publicKeyPEM": fcmPublic]],
            "apnsTokenUpdateAllowance": 100,
            "hmsApps": [["appId": Self.hmsAppID, "clientSecret": "fuzz-hms-secret"]],
        ].merging(simulatorSettings) { _, given in given }
        try files.write("simulator.json", files.json(simulatorConfig))
        try files.write("hms-secret", "fuzz-hms-secret")
        simulator = try FuzzProcess(name: "simulator", binary, ["simulate", "--config", directory + "/simulator.json",
                                                                 "--ca-out", directory + "/ca.pem", "--stats-json", simulatorStatsPath,
                                                                 "--log-level", "warning"],
                                    logPath: directory + "/simulator.log")
        let simDeadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: directory + "/ca.pem"), ContinuousClock.now < simDeadline, simulator?.exited() == nil {
            try await Task.sleep(for: .milliseconds(100))
        }
        guard FileManager.default.fileExists(atPath: directory + "/ca.pem") else {
            throw TestFailure("simulator did not start:\n\(simulator?.log.suffix(2000) ?? "")")
        }
        let base = "https://127.0.0.1:\(port)"
        try files.write("service-account.json", files.json([
            "type": "service_account", "project_id": "pushfleet-fuzz", "private_key_id": "fuzzkey", "private_key": fcmPrivate,
            "client_email": email, "token_uri": base + "/token",
        ]))

        let migrate = try await TestEnvironment.run(binary, ["migrate", "--database-url", database.url], timeout: .seconds(120))
        guard migrate.status == 0 else { throw TestFailure("migrate failed: \(migrate.output)") }

        var config: [String: Any] = [
            "kafka": ["bootstrap_servers": bootstrap, "group_id": "pushfleet-fuzz", "topic_prefix": "push",
                      "properties": ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500"]],
            "database": ["url": database.url, "pool_size": 4],
            "tls": ["ca_bundle": directory + "/ca.pem"],
            "observability": ["listen": "127.0.0.1:0"],
            "logging": ["format": "text"],
            "apps": [Self.app: [
                "apns": ["topic": Self.app, "team_id": "FUZZTEAM01", "key_id": "FUZZKEY001", "key_path": directory + "/apns.p8", "base_url": base],
                "fcm": ["service_account_path": directory + "/service-account.json", "base_url": base],
                // The examples' subscriptions point at the simulator, which decrypts what it accepts.
                "webpush": ["vapid_private_key_path": directory + "/apns.p8", "subject": "mailto:fuzz@pushfleet.invalid",
                            "allowed_hosts": ["127.0.0.1"]],
                "hms": ["app_id": Self.hmsAppID, "client_secret_path": directory + "/hms-secret", "base_url": base,
                        "token_url": base + "/oauth2/v3/token"],
            ]],
        ]
        if !workerSettings.isEmpty { config["worker"] = workerSettings }
        try files.write("worker.json", files.json(config))
        // Worker 0 runs with tight memory bounds, so hostile batches go through it in
        // parts of 32 deliveries, and a few wide messages fill its byte bound: the
        // parts, the permits and the byte bound meet every kind of bad input.
        var tight = config
        tight["worker"] = ["max_deliveries_in_flight": 64, "max_in_flight_bytes": 1 << 20]
        try files.write("worker-tight.json", files.json(tight))
        for index in 0..<workerCount { try startWorker(tight: tightFirst && index == 0) }
    }

    /// Starts one more `pushfleet worker` (the next index), with the tight
    /// bounds or the plain configuration.
    @discardableResult
    func startWorker(tight: Bool = false) throws -> FuzzProcess {
        let index = workers.count
        let worker = try FuzzProcess(
            name: "worker-\(index)", binary, ["worker", "--config", directory + (tight ? "/worker-tight.json" : "/worker.json")],
            logPath: directory + "/worker-\(index).log",
            environment: ["PUSHFLEET_EXIT_WITH_PARENT": "1", "PUSHFLEET_LOG_LEVEL": "warning",
                          "PUSHFLEET_WORKER_ID": "fuzz-worker-\(index)"])
        workers.append(worker)
        return worker
    }

    /// Stops the simulator (SIGTERM) and returns what it answered, request log included.
    func stopSimulator() async throws -> JSONValue {
        _ = await simulator?.stop(grace: .seconds(10))
        return try JSONValue.parse(Array(Data(contentsOf: URL(fileURLWithPath: simulatorStatsPath))))
    }

    /// Stops the workers (SIGTERM) and returns their exit statuses; then the rest.
    func stopWorkers() async -> [Int32] {
        var statuses: [Int32] = []
        for worker in workers { statuses.append(await worker.stop()) }
        return statuses
    }

    func stopAll(keepDirectory: Bool) async {
        for worker in workers { _ = await worker.stop(grace: .seconds(10)) }
        _ = await simulator?.stop(grace: .seconds(5))
        _ = await kafka?.stop(grace: .seconds(5))
        if !keepDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    private var files: WorkDirectory { WorkDirectory(path: directory) }

    /// A free TCP port on 127.0.0.1 (the simulator is told it; its own port-0 report is buffered stdout).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
                guard bind(fd, p, length) == 0 else { return -1 }
                return getsockname(fd, p, &length)
            }
        }
        guard bound == 0 else { throw TestFailure("no free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
