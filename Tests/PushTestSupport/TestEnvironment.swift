import Foundation
import Logging

/// What the test targets find around them: the PostgreSQL server
/// `scripts/with-postgres.sh` started, the `pushfleet` binary the build made,
/// the repository's files, and how loudly to log. Each target decides what a
/// missing piece means for it (fail, skip).
package enum TestEnvironment {
    /// The PostgreSQL URL `scripts/with-postgres.sh` exports
    /// (`PUSHFLEET_TEST_DATABASE_URL`, else `PUSHFLEET_DATABASE_URL`); nil
    /// when neither is set to something.
    package static var postgresURL: String? {
        let environment = ProcessInfo.processInfo.environment
        for name in ["PUSHFLEET_TEST_DATABASE_URL", "PUSHFLEET_DATABASE_URL"] {
            if let url = environment[name], !url.isEmpty { return url }
        }
        return nil
    }

    /// The `pushfleet` executable: `PUSHFLEET_BIN`, else the one built next to
    /// the test bundle, else `.build/debug/pushfleet`; nil when there is none.
    package static var builtPushfleet: String? {
        if let explicit = ProcessInfo.processInfo.environment["PUSHFLEET_BIN"] { return explicit }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("pushfleet").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let fallback = FileManager.default.currentDirectoryPath + "/.build/debug/pushfleet"
        return FileManager.default.isExecutableFile(atPath: fallback) ? fallback : nil
    }

    /// The repository's root, found from this source file's path (Tests/PushTestSupport/).
    package static let repositoryRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `schemas/` in the repository: the JSON schemas, their examples and the migrations.
    package static var schemasDirectory: URL { repositoryRoot.appendingPathComponent("schemas") }

    /// `schemas/postgres`: the migrations `pushfleet migrate` applies.
    package static var migrationsDirectory: String { schemasDirectory.appendingPathComponent("postgres").path }

    /// Runs `executable` to its end with exactly `environment`, its standard
    /// output and error read together; returns its exit status and output.
    package static func runToEnd(
        _ executable: String, _ arguments: [String], environment: [String: String]
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// A logger for tests: warnings only; with `PUSHFLEET_TEST_LOG` set,
    /// everything from debug up (`PUSHFLEET_TEST_LOG=trace`: everything).
    package static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        switch ProcessInfo.processInfo.environment["PUSHFLEET_TEST_LOG"] {
        case nil: logger.logLevel = .warning
        case "trace": logger.logLevel = .trace
        default: logger.logLevel = .debug
        }
        return logger
    }
}
