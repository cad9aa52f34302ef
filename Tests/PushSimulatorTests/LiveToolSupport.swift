import Foundation
import Logging
import XCTest

@testable import PushSimulator

/// A simulator on port 0 plus a scratch directory holding its CA, for tests that
/// drive it with real HTTP/2 clients (curl, nghttp, h2load).
struct LiveSimulator {
    let simulator: PushSimulator
    let directory: URL

    var port: Int { simulator.port }
    var caPath: String { directory.appendingPathComponent("ca.pem").path }

    static func start(_ configuration: SimulatorConfiguration) async throws -> LiveSimulator {
        let simulator = PushSimulator(configuration: configuration, logger: Logger(label: "test.simulator"))
        try await simulator.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try simulator.caCertificatePEM.write(
            to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        return LiveSimulator(simulator: simulator, directory: directory)
    }

    /// Runs `body` against a started simulator, and stops it whatever happens.
    static func with(
        _ configuration: SimulatorConfiguration, _ body: (LiveSimulator) async throws -> Void
    ) async throws {
        let live = try await start(configuration)
        do {
            try await body(live)
        } catch {
            try? await live.stop()
            throw error
        }
        try await live.stop()
    }

    func stop() async throws {
        try await simulator.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to a file in the scratch directory and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// One provider token for every live test, reused as real senders do (a new
    /// token per request would trip the TooManyProviderTokenUpdates rule).
    static let sharedJWT: Result<String, TestCredentials.SetupError> = Result {
        try TestCredentials.get().providerToken(issuedAt: Date())
    }.mapError { TestCredentials.SetupError(message: "\($0)") }

    /// Provider-token APNs headers for curl/nghttp (`-H`/`--header` values).
    static func apnsHeaders(topic: String = TestCredentials.topic, id: String? = nil) throws -> [String] {
        let jwt = try sharedJWT.get()
        var headers = [
            "authorization: bearer \(jwt)", "apns-topic: \(topic)", "apns-push-type: alert", "apns-priority: 10",
        ]
        if let id { headers.append("apns-id: \(id)") }
        return headers
    }
}

/// Runs a tool without blocking the cooperative pool; returns its exit status and stdout.
func runTool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    // Drain stdout while the tool runs so a large output cannot block it.
    let reader = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do {
            try process.run()
        } catch {
            continuation.resume(throwing: error)
        }
    }
    let data = await reader.value
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
