import Foundation
import PushCore

/// The benchmark's sink: `pushfleet simulate` in fast mode (200 to every
/// APNs/FCM request without checks) as a child process, so its CPU is
/// measured apart from ours. It still serves the OAuth token endpoint for
/// the FCM account it is given.
final class BenchSink {
    let process: Process
    let port: Int
    let caPath: String
    var baseURL: String { "https://127.0.0.1:\(port)" }
    var tokenURI: String { baseURL + "/token" }

    /// Credentials the sink knows (it checks them only on the OAuth endpoint).
    struct Credentials {
        var apnsKeyID: String
        var apnsTeamID: String
        var apnsPublicKeyPEM: String
        var fcmClientEmail: String
        var fcmPrivateKeyID: String
        var fcmProjectID: String
        var fcmPublicKeyPEM: String
    }

    private init(process: Process, port: Int, caPath: String) {
        self.process = process
        self.port = port
        self.caPath = caPath
    }

    /// Starts the sink with `threads` event-loop threads and waits (≤ 30 s) for its port.
    static func start(directory: String, credentials c: Credentials, threads: Int) async throws -> BenchSink {
        let configPath = directory + "/sink.json"
        let caPath = directory + "/sink-ca.pem"
        let logPath = directory + "/sink.log"
        let config: JSONValue = .object([
            ("fastMode", .bool(true)), ("recordSendIDs", .bool(false)), ("eventLoopThreads", .int(Int64(threads))),
            ("maxConcurrentStreams", .int(1000)), ("apnsTokenUpdateAllowance", .null),
            ("apnsKeys", .array([.object([
                ("keyID", .string(c.apnsKeyID)), ("teamID", .string(c.apnsTeamID)),
                ("publicKeyPEM", .string(c.apnsPublicKeyPEM)), ("topics", .array([])),
            ])])),
            ("fcmAccounts", .array([.object([
                ("clientEmail", .string(c.fcmClientEmail)), ("privateKeyID", .string(c.fcmPrivateKeyID)),
                ("projectID", .string(c.fcmProjectID)), ("publicKeyPEM", .string(c.fcmPublicKeyPEM)),
            ])])),
            ("hmsApps", .array([.object([
                ("appId", .string(BenchHMSSender.appID)), ("clientSecret", .string(BenchHMSSender.clientSecret)),
            ])])),
        ])
        try Data(config.encoded()).write(to: URL(fileURLWithPath: configPath), options: .atomic)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        // stdout is a file, so stdio would hold the "listening" line until exit:
        // coreutils' stdbuf makes it line-buffered (it execs, so the pid stays the sink's).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = ["-oL", executablePath(), "simulate", "--config", configPath, "--port", "0", "--ca-out", caPath, "--log-level", "warning"]
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: logPath, encoding: .utf8),
               let port = Self.port(in: text), FileManager.default.fileExists(atPath: caPath) {
                return BenchSink(process: process, port: port, caPath: caPath)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        if process.isRunning { process.terminate() }
        throw CommandFailure("the sink (pushfleet simulate) did not report a port; see \(logPath)")
    }

    /// The port in `simulator listening on https://127.0.0.1:PORT …`.
    static func port(in text: String) -> Int? {
        let marker = "simulator listening on https://127.0.0.1:"
        guard let range = text.range(of: marker) else { return nil }
        return Int(text[range.upperBound...].prefix(while: \.isNumber))
    }

    /// The sink's CPU seconds so far.
    func cpuSeconds() -> Double { BenchUsage.processCPUSeconds(pid: process.processIdentifier) ?? 0 }

    /// SIGTERM, then up to 10 s for it to exit, then SIGKILL.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
