import ArgumentParser
import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the fleet end to end on the local stack: mock Kafka (3 brokers), the APNs/FCM simulator, W worker processes, PostgreSQL.")

    @Option(name: .long, help: "PostgreSQL URL to use (env PUSHFLEET_DATABASE_URL); `make demo` starts a throwaway server.")
    var databaseURL: String?

    @Option(name: .long, help: "Notifications to enqueue.")
    var notifications = 1000

    @Option(name: .long, help: "Worker processes to run in one consumer group.")
    var workers = 2

    @Option(name: .long, help: "Partitions of the intake topic.")
    var partitions: Int32 = 6

    @Option(name: .long, help: "Give up waiting for outcomes after this many seconds.")
    var timeout = 300

    @Option(name: .long, help: "Seed for the generated notifications.")
    var seed: UInt64 = 2026

    @Option(name: .long, help: "Write expected and actual counts as JSON here.")
    var summaryJSON: String?

    @Option(name: .long, help: "Working directory for keys, configs and worker logs (default: a temp dir, removed after).")
    var workDir: String?

    @Flag(name: .long, help: "Keep the local stack (Kafka, simulator, the worker config) up after the result, with the simulator's faults lifted, until Ctrl-C; prints the addresses. The working directory is kept.")
    var keep = false

    @Option(name: .customLong("apns-503-first"), help: "Fault: the simulator answers 503 to the first N APNs requests (they must pass through the retry tiers).")
    var apns503First = 0

    @Flag(name: .customLong("fcm-always-503"), help: "Fault: the simulator answers 503 to every FCM request (Android deliveries must end dead-lettered).")
    var fcmAlways503 = false

    @Option(name: .customLong("fcm-outage-seconds"), help: "Fault: the simulator answers 503 to every FCM request for this many seconds after the workers start, then recovers (every delivery must still end accepted; the summary reports how many messages went to the retry topics).")
    var fcmOutageSeconds: Double?

    @Option(name: .customLong("max-in-flight"), help: "The workers' worker.max_in_flight (messages taken and not yet finished per worker).")
    var maxInFlight: Int?

    @Option(name: .long, help: "Delay of the shortest retry tier in ms (tiers are ×1, ×2, ×4; default: 5 s, 1 min, 10 min).")
    var retryDelayMs: Int?

    @Option(name: .long, help: "Attempts before a delivery is dead-lettered.")
    var maxAttempts = 5

    @Flag(name: .long, help: "Chaos: SIGKILL a worker (and start another), take a broker down for 5 s, restart PostgreSQL, SIGTERM a worker, all mid-run.")
    var chaos = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.demo")
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL (make demo starts one)")
        }
        guard notifications > 0, workers > 0, partitions > 0 else { throw CommandFailure("--notifications, --workers and --partitions must be positive") }
        let keepDir = workDir != nil || keep
        let dir = workDir ?? (NSTemporaryDirectory() + "pushfleet-demo-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { if !keepDir { try? FileManager.default.removeItem(atPath: dir) } }

        var demo = DemoRun(directory: dir, databaseURL: url, logger: logger, seed: seed,
                           faults: DemoFaults(apns503First: apns503First, fcmAlways503: fcmAlways503,
                                              fcmOutageSeconds: fcmOutageSeconds, maxInFlight: maxInFlight,
                                              retryDelayMs: retryDelayMs, maxAttempts: maxAttempts, chaos: chaos))
        let started = ContinuousClock.now
        let (result, stack) = try await demo.run(notifications: notifications, workers: workers, partitions: partitions, timeout: .seconds(timeout))
        result.printReport(elapsed: ContinuousClock.now - started)
        do {
            if let summaryJSON {
                try Data(result.summaryJSON().encoded()).write(to: URL(fileURLWithPath: summaryJSON), options: .atomic)
            }
            if keep { try await stack.keepUp() }
        } catch {
            await stack.shutdown()
            throw error
        }
        await stack.shutdown()
        guard result.passed else {
            throw CommandFailure("demo FAILED: outcomes in PostgreSQL do not match what was enqueued (see above; worker logs in \(dir))")
        }
    }
}
