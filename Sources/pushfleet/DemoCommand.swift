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

    @Option(name: .customLong("fcm-outage-seconds"), help: "Fault: the simulator answers 503 to every FCM request for this many seconds, then recovers (every delivery must still end accepted). Prints enqueue→accepted p50/p99 per platform for deliveries enqueued before, during and after it, and the parked and retry topics' messages.")
    var fcmOutageSeconds: Double?

    @Option(name: .customLong("fcm-outage-start-seconds"), help: "When the FCM outage starts: seconds after the steady publishing starts (--publish-rate), else after the workers start.")
    var fcmOutageStartSeconds: Double = 0

    @Option(name: .customLong("circuit-open-ms"), help: "The workers' retry.circuit_breaker.open_ms (default: 1000 when a fault is injected, else the worker's 30 s).")
    var circuitOpenMs: Int?

    @Option(name: .customLong("circuit-minimum-requests"), help: "The workers' retry.circuit_breaker.minimum_requests (requests in the breaker's 10 s window before it may open; the worker's default 20). A slow --publish-rate needs fewer for an outage to open the circuit.")
    var circuitMinimumRequests: Int?

    @Option(name: .long, help: "Publish the notifications at this many per second once the workers' groups have settled (default: all enqueued before the workers start).")
    var publishRate: Double?

    @Option(name: .long, help: "With --publish-rate: a campaign of this many notifications (another app of the same team) on the bulk lane, enqueued at once when the workers' groups have settled. While it drains, the interactive traffic goes in every other 5 s window (until half of it is out or 90 % of the backlog is final), the rest after it drained; prints both lanes' latency and the backlog's drain rate in the windows with and without interactive traffic.")
    var bulkBacklog = 0

    @Option(name: .long, help: "Partitions of the bulk lane's intake (default: enough for --bulk-backlog on the local cluster, at least --partitions).")
    var bulkPartitions: Int32?

    @Option(name: .customLong("refused-apns-key"), help: "With --publish-rate: this many notifications of a second app (another team) whose APNs key the simulator refuses (403 InvalidProviderToken), spread over the second half of the traffic; prints the demo app's iOS latency without and with them. They end dead-lettered when their attempts run out: use a short --retry-delay-ms.")
    var refusedAPNsKey = 0

    @Option(name: .customLong("fcm-fleet-quota"), help: "The demo app's apps.<app>.fcm.fleet_rate_limit_per_second; prints each worker's share.")
    var fcmFleetQuota: Int?

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
        if let publishRate, !(publishRate > 0 && publishRate.isFinite) { throw CommandFailure("--publish-rate must be positive") }
        if publishRate == nil, bulkBacklog > 0 || refusedAPNsKey > 0 {
            throw CommandFailure("--bulk-backlog and --refused-apns-key need --publish-rate (their phases are timed)")
        }
        if bulkBacklog > 0, refusedAPNsKey > 0 { throw CommandFailure("run --bulk-backlog and --refused-apns-key apart: each halves the traffic into phases of its own") }
        guard bulkBacklog >= 0, refusedAPNsKey >= 0, fcmOutageStartSeconds >= 0, bulkPartitions.map({ $0 > 0 }) ?? true,
              circuitOpenMs.map({ $0 > 0 }) ?? true, circuitMinimumRequests.map({ $0 > 0 }) ?? true,
              fcmFleetQuota.map({ $0 > 0 }) ?? true else {
            throw CommandFailure("--bulk-backlog, --refused-apns-key and --fcm-outage-start-seconds must be ≥ 0; --bulk-partitions, --circuit-open-ms, --circuit-minimum-requests and --fcm-fleet-quota positive")
        }
        let keepDir = workDir != nil || keep
        let dir = workDir ?? (NSTemporaryDirectory() + "pushfleet-demo-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { if !keepDir { try? FileManager.default.removeItem(atPath: dir) } }

        var demo = DemoRun(directory: dir, databaseURL: url, logger: logger, seed: seed,
                           faults: DemoFaults(apns503First: apns503First, fcmAlways503: fcmAlways503,
                                              fcmOutageSeconds: fcmOutageSeconds, fcmOutageStartSeconds: fcmOutageStartSeconds,
                                              circuitOpenMs: circuitOpenMs, circuitMinimumRequests: circuitMinimumRequests,
                                              maxInFlight: maxInFlight,
                                              retryDelayMs: retryDelayMs, maxAttempts: maxAttempts, chaos: chaos),
                           load: DemoLoad(publishRate: publishRate, bulkBacklog: bulkBacklog, bulkPartitions: bulkPartitions,
                                          refusedKeyNotifications: refusedAPNsKey, fcmFleetQuota: fcmFleetQuota))
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
