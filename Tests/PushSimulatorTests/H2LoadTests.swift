import Foundation
import Logging
import XCTest

@testable import PushSimulator

/// A bounded load smoke test: many concurrent streams on a few connections
/// against fast mode, with nghttp2's h2load (skipped when it is not installed).
/// Not a benchmark (debug build, shared CPU); `SIM_H2LOAD_N/C/M` override the size.
final class H2LoadTests: XCTestCase {
    func testFastModeServesConcurrentStreams() async throws {
        let h2load = "/usr/bin/h2load"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: h2load), "h2load not installed")
        let simulator = PushSimulator(
            configuration: SimulatorConfiguration(fastMode: true, eventLoopThreads: 2), logger: Logger(label: "test"))
        try await simulator.start()
        let environment = ProcessInfo.processInfo.environment
        let requests = Int(environment["SIM_H2LOAD_N"] ?? "") ?? 2_000
        let connections = environment["SIM_H2LOAD_C"] ?? "4"
        let streams = environment["SIM_H2LOAD_M"] ?? "100"
        let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("h2load-\(UUID().uuidString)")
        try #"{"aps":{"alert":"hi"}}"#.write(to: bodyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: bodyFile) }

        let started = Date()
        let result = try await runTool(
            h2load,
            [
                "-n", "\(requests)", "-c", connections, "-m", streams, "-d", bodyFile.path, "-H",
                "apns-topic: com.example.app", "https://127.0.0.1:\(simulator.port)/3/device/\(deviceToken(5))",
            ])
        let elapsed = Date().timeIntervalSince(started)
        let text = result.output
        try await simulator.shutdown()
        XCTAssertEqual(result.status, 0, text)
        XCTAssertTrue(text.contains("\(requests) succeeded"), text)
        let stats = simulator.stats()
        XCTAssertEqual(stats.apnsAccepted, requests)
        XCTAssertEqual(stats.connectionsAccepted, Int(connections))
        let summary = text.split(separator: "\n").first { $0.hasPrefix("finished in") } ?? ""
        print("h2load fast mode: \(requests) requests in \(String(format: "%.2f", elapsed)) s (\(summary))")
    }
}
