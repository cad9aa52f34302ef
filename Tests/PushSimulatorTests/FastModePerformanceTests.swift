import Foundation
import Logging
import XCTest

@testable import PushSimulator

/// The benchmark sink's throughput: h2load against fast mode. Skipped unless
/// `PUSHSIM_PERF=1`; build with `-c release` for a meaningful figure.
/// `PUSHSIM_PERF_N/C/M/THREADS` override requests, connections, streams and event-loop threads.
final class FastModePerformanceTests: XCTestCase {
    func testFastModeThroughputWithH2Load() async throws {
        let environment = ProcessInfo.processInfo.environment
        try XCTSkipUnless(environment["PUSHSIM_PERF"] == "1", "set PUSHSIM_PERF=1 to measure")
        let h2load = "/usr/bin/h2load"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: h2load), "h2load not installed")
        let requests = environment["PUSHSIM_PERF_N"] ?? "50000"
        let connections = environment["PUSHSIM_PERF_C"] ?? "2"
        let streams = environment["PUSHSIM_PERF_M"] ?? "100"
        let threads = Int(environment["PUSHSIM_PERF_THREADS"] ?? "") ?? 2
        try await LiveSimulator.with(
            SimulatorConfiguration(fastMode: true, eventLoopThreads: threads, recordSendIDs: false)) { live in
            let body = try live.file("body.json", #"{"aps":{"alert":"hi"}}"#)
            let result = try await runTool(
                h2load,
                [
                    "-n", requests, "-c", connections, "-m", streams, "-d", body, "-H", "apns-topic: com.example.app",
                    live.url("/3/device/\(deviceToken(5))"),
                ])
            XCTAssertEqual(result.status, 0, result.output)
            XCTAssertTrue(result.output.contains("\(requests) succeeded"), result.output)
            XCTAssertEqual(live.simulator.stats().apnsAccepted, Int(requests))
            let summary = result.output.split(separator: "\n").first { $0.hasPrefix("finished in") } ?? ""
            print("PUSHSIM_PERF fast mode, n=\(requests) c=\(connections) m=\(streams) threads=\(threads): \(summary)")
        }
    }
}
