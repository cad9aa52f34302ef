import ArgumentParser
import Foundation
import Logging
import PushWorker
import ServiceLifecycle

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run one worker: consume notifications, send them, record outcomes. Stops cleanly on SIGTERM/SIGINT.")

    @Option(name: .long, help: "Configuration file (JSON). Environment overrides: PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS, PUSHFLEET_DATABASE_URL, …")
    var config: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.worker")
        let configuration: WorkerConfiguration
        do {
            configuration = try WorkerConfiguration.load(path: config ?? ProcessInfo.processInfo.environment["PUSHFLEET_CONFIG"])
        } catch {
            logger.critical("invalid configuration", metadata: ["error": "\(error)"])
            throw ExitCode(78)  // EX_CONFIG
        }
        if ProcessInfo.processInfo.environment["PUSHFLEET_EXIT_WITH_PARENT"] == "1" {
            exitWithParent(logger: logger)
        }
        let worker = PushWorkerService(configuration: configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: worker)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}

/// For workers started by `pushfleet demo` and tests: when the parent dies
/// (even by SIGKILL), stop gracefully instead of living on as an orphan.
private func exitWithParent(logger: Logger) {
    let parent = getppid()
    let thread = Thread {
        while getppid() == parent { Thread.sleep(forTimeInterval: 0.5) }
        logger.warning("parent process gone; stopping")
        kill(getpid(), SIGTERM)
    }
    thread.name = "pushfleet.parent-watch"
    thread.start()
}
