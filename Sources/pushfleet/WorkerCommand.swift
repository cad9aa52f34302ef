import ArgumentParser
import Foundation
import Logging
import Metrics
import PushCore
import PushThreads
import PushWorker
import ServiceLifecycle

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run one worker: consume notifications, send them, record outcomes. Stops cleanly on SIGTERM/SIGINT.")

    @Option(name: .long, help: "Configuration file (JSON). Environment overrides: PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS, PUSHFLEET_DATABASE_URL, …")
    var config: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Also consume device receipts from PREFIX.receipts (env PUSHFLEET_RECEIPTS_ENABLED=0 switches it off).")
    var receipts = true

    @OptionGroup var common: CommonOptions

    func run() async throws {
        // A SIGTERM during start-up (before the service group installs its handlers) must
        // still stop the worker gracefully with exit 0, not kill it (exit 143).
        let earlySignals = EarlySignals.install()
        let configuration: WorkerConfiguration
        do {
            configuration = try WorkerConfiguration.load(path: config ?? ProcessInfo.processInfo.environment["PUSHFLEET_CONFIG"])
        } catch {
            common.makeLogger("pushfleet.worker").critical("invalid configuration", metadata: ["error": "\(error)"])
            throw ExitCode(78)  // EX_CONFIG
        }
        // Logs: the configured format (JSON by default); --log-level wins over file and env.
        var observability = configuration.observability
        if let raw = common.logLevel {
            guard let level = Logger.Level(rawValue: raw.lowercased()) else {
                common.makeLogger("pushfleet.worker").critical("invalid --log-level", metadata: ["log.level": "\(raw)"])
                throw ExitCode(78)
            }
            observability.logLevel = level
        }
        let logConfiguration = observability
        LoggingBootstrap.once { label in logConfiguration.makeLogHandler(label: label) }
        var logger = Logger(label: "pushfleet.worker")
        logger.logLevel = observability.logLevel

        if ProcessInfo.processInfo.environment["PUSHFLEET_EXIT_WITH_PARENT"] == "1" {
            exitWithParent(logger: logger)
        }
        // Metrics and health on one listener: /metrics, /health/live, /health/ready.
        let exposition = PrometheusExposition()
        MetricsSystem.bootstrap(exposition.factory)
        let metrics = WorkerMetrics(factory: exposition.factory)
        metrics.registerZeroSeries(configuration)
        let build = BuildInfo.components()
        metrics.setBuildInfo(build)
        logger.info("pushfleet starting", metadata: Logger.Metadata(
            uniqueKeysWithValues: build.map { ($0.name == "version" ? "pushfleet.version" : "\($0.name).version", .string($0.version)) }))
        let health = HealthState(livenessWindow: observability.livenessWindow)
        let worker = PushWorkerService(configuration: configuration, logger: logger, observer: metrics, health: health)
        let server = ObservabilityServer(
            host: observability.listenHost, port: observability.listenPort,
            exposition: exposition, health: health, logger: logger,
            beforeScrape: {
                Self.export(worker, into: metrics)
                metrics.exportProcess()
            })
        // Started first, stopped last: the listener outlives the worker's drain.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: server), .init(service: worker)]
        // Device receipts (PREFIX.receipts, group "<group>.receipts"); on unless switched off.
        let receiptsEnv = ProcessInfo.processInfo.environment["PUSHFLEET_RECEIPTS_ENABLED"]?.lowercased()
        if receipts, receiptsEnv != "0", receiptsEnv != "false" {
            services.append(.init(service: ReceiptConsumerService(
                configuration: .init(worker: configuration), logger: logger)))
        }
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        earlySignals.onSignal { Task { await group.triggerGracefulShutdown() } }
        Task {
            if let port = try? await server.boundPort() {
                logger.info("metrics and health listening", metadata: [
                    "observability.listen": "\(observability.listenHost):\(port)"])
            }
        }
        do {
            try await group.run()
        } catch let error as ConfigurationError {
            // Found when the provider clients are built (a key file that is unreadable or
            // not a key): a bad configuration like any other, which a restart will not fix.
            logger.critical("invalid configuration", metadata: ["error": "\(error)"])
            throw ExitCode(78)  // EX_CONFIG
        }
    }

    /// Scrape time: running totals, consumer lag and provider-client counters into the registry.
    private static func export(_ worker: PushWorkerService, into metrics: WorkerMetrics) {
        metrics.export(worker.stats)
        metrics.export(lag: worker.consumerLag(), topics: worker.topics)
        for client in worker.providerStats() {
            metrics.export(client.stats, provider: client.provider, app: client.app, host: client.host)
        }
    }
}

/// For workers started by `pushfleet demo` and tests: when the parent dies
/// (even by SIGKILL), stop gracefully instead of living on as an orphan.
private func exitWithParent(logger: Logger) {
    let parent = getppid()
    let thread = Thread {
        ThreadName.setCurrent("parent-watch")
        while getppid() == parent { Thread.sleep(forTimeInterval: 0.5) }
        logger.warning("parent process gone; stopping")
        kill(getpid(), SIGTERM)
    }
    thread.name = "parent-watch"
    thread.start()
}

/// Catches SIGTERM and SIGINT from the first line of `worker`, before the service group
/// installs its own handlers, and forwards them once the group exists (a request made
/// before `ServiceGroup.run()` is remembered by the group).
///
/// `@unchecked Sendable` is safe: `received` and `action` are only touched on `queue`;
/// `sources` only in `install`, before any handler can read it.
private final class EarlySignals: @unchecked Sendable {
    private let queue = DispatchQueue(label: "pushfleet.early-signals")
    private var sources: [any DispatchSourceSignal] = []
    private var received = false
    private var action: (@Sendable () -> Void)?

    static func install() -> EarlySignals {
        let signals = EarlySignals()
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: signals.queue)
            source.setEventHandler { signals.fire() }
            source.resume()
            signals.sources.append(source)
        }
        return signals
    }

    private func fire() {
        received = true
        action?()
    }

    /// Runs `action` now if a signal already came, and on every later one.
    func onSignal(_ action: @escaping @Sendable () -> Void) {
        queue.sync {
            self.action = action
            if received { action() }
        }
    }
}
