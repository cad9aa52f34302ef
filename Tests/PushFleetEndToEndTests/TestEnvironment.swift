import Foundation
import Logging
import PushCore
import PushPostgres
import PushTestSupport
import XCTest

/// What the end-to-end tests need beyond the shared environment: a missing
/// server skips them (fails them on CI), a missing binary fails them.
extension TestEnvironment {
    /// The PostgreSQL URL `scripts/with-postgres.sh` exported.
    static func databaseURL() throws -> String {
        guard let url = postgresURL else {
            if ProcessInfo.processInfo.environment["CI"] != nil { throw TestFailure("CI run without PostgreSQL: .ci/run must go through `make test`") }
            throw XCTSkip("""
                no PostgreSQL: run the end-to-end tests through `make test` \
                (or `scripts/with-postgres.sh swift test`), which starts a throwaway server
                """)
        }
        return url
    }

    /// The `pushfleet` executable built next to the test bundle (or PUSHFLEET_BIN).
    static func pushfleetBinary() throws -> String {
        guard let binary = builtPushfleet else {
            throw TestFailure("pushfleet binary not found next to the tests; run `swift build` first or set PUSHFLEET_BIN")
        }
        return binary
    }

    struct Run {
        var status: Int32
        var output: String
    }

    /// Runs a process, collecting its combined output; kills it at `timeout`.
    /// Uses posix_spawn and waitpid directly: Foundation's `Process` was seen
    /// to miss the exit of a child that had started a daemon (the chaos
    /// run's PostgreSQL restart), leaving `isRunning` true for ever.
    /// With `environment`, the child gets this process's environment less its
    /// PUSHFLEET_* variables (as `BackgroundProcess` does) plus `environment`;
    /// `stdin` names a file for its standard input.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil,
                    timeout: Duration) async throws -> Run {
        let outputPath = NSTemporaryDirectory() + "e2e-out-\(UUID().uuidString).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = []
        if let environment {
            var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHFLEET_") }
            for (k, v) in environment { env[k] = v }
            envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let spawned = envp.isEmpty
            ? posix_spawn(&pid, path, &actions, nil, argv, environ)
            : posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestFailure("cannot start \(path): errno \(spawned)") }
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var signalled = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || r < 0 { break }
            if ContinuousClock.now > deadline, !signalled {
                kill(pid, SIGTERM)
                signalled = true
                try await Task.sleep(for: .seconds(5))
                kill(pid, SIGKILL)
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Run(status: exitStatus, output: output)
    }
}

extension TestEnvironment {
    /// Seconds a demo of `deliveries` may take before it counts as stuck: a
    /// floor for start-up and faults plus a rate a loaded 2-core machine
    /// running a debug build still reaches (25 deliveries/s, ten times below
    /// what an idle one does), times `PUSHFLEET_E2E_TIMEOUT_SCALE` (default 1)
    /// for slower machines. A ceiling, not an expectation: a healthy run ends
    /// as soon as everything is final.
    static func demoTimeout(deliveries: Int) -> Int {
        let scale = ProcessInfo.processInfo.environment["PUSHFLEET_E2E_TIMEOUT_SCALE"].flatMap(Double.init) ?? 1
        return Int((120 + Double(deliveries) / 25) * max(scale, 0.1))
    }

    /// Runs `pushfleet demo` against `database` with two workers and returns its summary JSON.
    static func runDemo(_ binary: String, database: TestDatabase, deliveries: Int, extra: [String]) async throws -> JSONValue {
        let summaryPath = NSTemporaryDirectory() + "e2e-summary-\(UUID().uuidString).json"
        let workDir = NSTemporaryDirectory() + "e2e-work-\(UUID().uuidString)"
        let timeout = demoTimeout(deliveries: deliveries)
        let run = try await TestEnvironment.run(binary, [
            "demo", "--database-url", database.url, "--workers", "2", "--timeout", "\(timeout)",
            "--summary-json", summaryPath, "--work-dir", workDir, "--log-level", "warning",
        ] + extra, timeout: .seconds(timeout + 120))
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: workDir))?.filter { $0.hasSuffix(".log") }
            .map { (try? String(contentsOfFile: workDir + "/" + $0, encoding: .utf8)) ?? "" }.joined(separator: "\n") ?? ""
        try? FileManager.default.removeItem(atPath: workDir)
        guard run.status == 0 else {
            throw TestFailure("demo failed (exit \(run.status)):\n\(run.output.suffix(4000))\nworker logs:\n\(logs.suffix(6000))")
        }
        defer { try? FileManager.default.removeItem(atPath: summaryPath) }
        // The result is the last screen: no client's teardown logs after the table or its verdict.
        let lastScreen = run.output.components(separatedBy: "Deliveries in PostgreSQL").dropFirst().last ?? ""
        let lastLine = run.output.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard !lastScreen.isEmpty, lastLine == "RESULT: PASS", !lastScreen.contains("[PushKafka]") else {
            throw TestFailure("the demo's result table and RESULT: PASS must end its output:\n\(run.output.suffix(4000))")
        }
        return try JSONValue.parse(Array(Data(contentsOf: URL(fileURLWithPath: summaryPath))))
    }
}

extension JSONValue {
    /// An object of integer counts as a dictionary.
    func counts(_ key: String) -> [String: Int] {
        guard case .object(let members)? = self[key] else { return [:] }
        var out: [String: Int] = [:]
        for (k, v) in members { if case .int(let n) = v { out[k] = Int(n) } }
        return out
    }

    func int(_ key: String) -> Int? {
        if case .int(let n)? = self[key] { return Int(n) }
        return nil
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A database of its own for one test, dropped afterwards.
struct TestDatabase {
    var url: String
    var name: String
    var adminURL: String

    static func create(adminURL: String, logger: Logger) async throws -> TestDatabase {
        let name = "e2e_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try await PostgresConnection.connect(url: adminURL, logger: logger)
        defer { admin.close() }
        try await admin.execute("CREATE DATABASE \(name)")
        guard var components = URLComponents(string: adminURL) else { throw TestFailure("bad database URL") }
        components.path = "/" + name
        guard let url = components.string else { throw TestFailure("bad database URL") }
        return TestDatabase(url: url, name: name, adminURL: adminURL)
    }

    func drop(logger: Logger) async {
        guard let admin = try? await PostgresConnection.connect(url: adminURL, logger: logger) else { return }
        defer { admin.close() }
        try? await admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

extension PostgresRow {
    /// A count column as Int (nil when NULL or not a number).
    func count(_ column: String) -> Int? { self[column].flatMap { Int($0) } }
}

/// A child process running in the background (a worker, the mock cluster),
/// its output in a file; stopped with SIGTERM (then SIGKILL) and reaped.
final class BackgroundProcess {
    let pid: pid_t
    let outputPath: String

    init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        outputPath = NSTemporaryDirectory() + "e2e-bg-\(UUID().uuidString).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The arguments and `environment` are the truth: drop PUSHFLEET_* inherited from
        // scripts/with-postgres.sh (its PUSHFLEET_DATABASE_URL would override a config file).
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHFLEET_") }
        for (k, v) in environment { env[k] = v }
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestFailure("cannot start \(path): errno \(spawned)") }
        self.pid = pid
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, up to `grace` for an exit, then SIGKILL. Returns the exit status (128+signal if killed).
    @discardableResult
    func stop(grace: Duration = .seconds(30)) async -> Int32 {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || r < 0 { break }
            if ContinuousClock.now > deadline { kill(pid, SIGKILL) }
            try? await Task.sleep(for: .milliseconds(100))
        }
        try? FileManager.default.removeItem(atPath: outputPath)
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
