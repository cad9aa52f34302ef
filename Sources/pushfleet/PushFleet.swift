import ArgumentParser
import Foundation
import Logging
import PushPostgres

@main
struct PushFleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushfleet",
        abstract: "PushFleet: a queue-backed push-notification worker fleet (Kafka → APNs, FCM, Web Push, Push Kit → PostgreSQL).",
        subcommands: [
            WorkerCommand.self, MigrateCommand.self, EnqueueCommand.self, SimulateCommand.self,
            MockKafkaCommand.self, DemoCommand.self, DLQCommand.self, BenchCommand.self,
            MaintainCommand.self, ReportCommand.self, SkipCommand.self, TopicsCommand.self, VersionCommand.self,
            StatusCommand.self,
            CampaignCommand.self,
        ])
}

/// Options every command shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (env PUSHFLEET_LOG_LEVEL).")
    var logLevel: String?

    /// Bootstraps logging once for the process and returns the command's logger.
    func makeLogger(_ label: String) -> Logger {
        let raw = logLevel ?? ProcessInfo.processInfo.environment["PUSHFLEET_LOG_LEVEL"] ?? "info"
        let level = Logger.Level(rawValue: raw.lowercased()) ?? .info
        LoggingBootstrap.once(level: level)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    private static let done = NSLock()
    nonisolated(unsafe) private static var bootstrapped = false

    /// Text lines on standard error (every command but `worker`).
    static func once(level: Logger.Level) {
        once { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// A handler of the caller's choice (the worker: JSON or text, from its configuration).
    static func once(_ factory: @escaping @Sendable (String) -> any LogHandler) {
        done.lock()
        defer { done.unlock() }
        guard !bootstrapped else { return }
        bootstrapped = true
        LoggingSystem.bootstrap(factory)
    }
}

/// A command-line failure with a message for the operator.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The SQL migrations to apply: those of `--migrations DIR` (`explicit`) or
/// `PUSHFLEET_MIGRATIONS_DIR` when one is given (another release's set, say,
/// for a benchmark), else the ones built into this binary (schemas/postgres/
/// when it was built), so no command needs the repository.
func migrationsToApply(_ explicit: String?) throws -> [PostgresMigrator.Migration] {
    if let directory = explicit ?? ProcessInfo.processInfo.environment["PUSHFLEET_MIGRATIONS_DIR"] {
        return try PostgresMigrator.migrations(in: directory)
    }
    return try PostgresMigrator.builtIn()
}

/// This executable's path.
func executablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Writes a line to standard output unbuffered, so progress lines and the
/// report keep their order when stdout is a pipe.
func say(_ text: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}
