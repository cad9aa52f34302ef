import ArgumentParser
import Foundation
import Logging

@main
struct PushFleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushfleet",
        abstract: "PushFleet: a queue-backed push-notification worker fleet (Kafka → APNs/FCM → PostgreSQL).",
        subcommands: [
            WorkerCommand.self, MigrateCommand.self, EnqueueCommand.self, SimulateCommand.self,
            MockKafkaCommand.self, DemoCommand.self, DLQCommand.self, BenchCommand.self,
            MaintainCommand.self, ReportCommand.self, SkipCommand.self, TopicsCommand.self, VersionCommand.self,
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

/// Locates the SQL migrations: `--migrations`, `PUSHFLEET_MIGRATIONS_DIR`,
/// `./schemas/postgres`, or `share/pushfleet/migrations` beside the binary.
func migrationsDirectory(_ explicit: String?, optionName: String? = nil) throws -> String {
    if let explicit { return explicit }
    let env = ProcessInfo.processInfo.environment
    var candidates: [String] = []
    if let dir = env["PUSHFLEET_MIGRATIONS_DIR"] { candidates.append(dir) }
    candidates.append(FileManager.default.currentDirectoryPath + "/schemas/postgres")
    let binary = URL(fileURLWithPath: executablePath()).resolvingSymlinksInPath()
    candidates.append(binary.deletingLastPathComponent().appendingPathComponent("../share/pushfleet/migrations").standardized.path)
    // A `swift build` product lives in <repo>/.build/<triple>/<config>/.
    candidates.append(binary.deletingLastPathComponent().appendingPathComponent("../../../schemas/postgres").standardized.path)
    for dir in candidates {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue { return dir }
    }
    // `migrate` has --migrations; every other command finds them only this way.
    let how = optionName.map { "pass \($0) DIR or set PUSHFLEET_MIGRATIONS_DIR" }
        ?? "set PUSHFLEET_MIGRATIONS_DIR to the repository's schemas/postgres, or run from the repository"
    throw CommandFailure("cannot find the SQL migrations; \(how) (looked in \(candidates.joined(separator: ", ")))")
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
