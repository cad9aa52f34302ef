import Foundation
import XCTest

@testable import PushSimulator

/// Issue 5's transport faults, driven by real HTTP/2 clients: nghttp (which
/// prints every frame it receives) and the curl CLI (libcurl + nghttp2, as the workers use).
final class FaultScenarioLiveTests: XCTestCase {
    let nghttp = "/usr/bin/nghttp"
    let curl = "/usr/bin/curl"
    let payload = #"{"aps":{"alert":"hi"}}"#

    /// Runs `body` against a simulator with these scenarios (skipped without nghttp).
    private func withLive(
        _ scenarios: [SimulatorScenario], _ body: (LiveSimulator) async throws -> Void
    ) async throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: nghttp), "nghttp (nghttp2-client) not installed")
        var configuration = try TestCredentials.get().configuration()
        configuration.scenarios = scenarios
        try await LiveSimulator.with(configuration, body)
    }

    /// nghttp arguments: verbose frames, POST `payload` to every path on one connection.
    private func nghttpArguments(_ live: LiveSimulator, paths: [String], headers: [String]) throws -> [String] {
        var arguments = ["-nv", "-y", "-t", "20", "-d", try live.file("body-\(UUID().uuidString).json", payload)]
        for header in headers { arguments += ["-H", header] }
        return arguments + paths.map(live.url)
    }

    private func occurrences(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// Waits (bounded) until `condition` holds for the simulator's stats.
    private func eventually(_ live: LiveSimulator, _ condition: (SimulatorStats) -> Bool) async throws -> SimulatorStats {
        for _ in 0..<100 {
            let stats = live.simulator.stats()
            if condition(stats) { return stats }
            try await Task.sleep(for: .milliseconds(20))
        }
        return live.simulator.stats()
    }

    func testGoawayAfterNStreamsNamesTheLastProcessedStream() async throws {
        try await withLive([.init(fault: .goaway(afterStreams: 3))]) { live in
            let paths = (0..<6).map { "/3/device/\(deviceToken(UInt8(0x20 + $0)))" }
            let result = try await runTool(nghttp, try nghttpArguments(live, paths: paths, headers: LiveSimulator.apnsHeaders()))
            let output = result.output
            // Three streams are answered, and the GOAWAY names the third as the last one processed
            // (nghttp numbers its requests 13, 15, 17, … after its priority anchors).
            let answered = output.split(separator: "\n").compactMap { line -> Int? in
                guard line.contains(":status: 200"), let start = line.range(of: "stream_id="),
                    let end = line[start.upperBound...].firstIndex(of: ")")
                else { return nil }
                return Int(line[start.upperBound..<end])
            }
            XCTAssertEqual(answered.count, 3, output)
            XCTAssertTrue(output.contains("recv GOAWAY frame"), output)
            XCTAssertTrue(output.contains("last_stream_id=\(answered.max() ?? -1),"), output)
            XCTAssertTrue(output.contains("error_code=NO_ERROR"), output)
            XCTAssertEqual(occurrences(":status: 200", in: output), 3, output)
            let stats = try await eventually(live) { $0.streamsRefusedByGoaway == 3 }
            XCTAssertEqual(stats.goawaysSent, 1)
            XCTAssertEqual(stats.apnsAccepted, 3)
            XCTAssertEqual(stats.streamsRefusedByGoaway, 3, "streams 7, 9, 11 were seen but never processed")
            XCTAssertEqual(stats.requestsUnanswered, 0)
        }
    }

    func testCurlRecoversFromRepeatedGoawaysWithoutDuplicates() async throws {
        try await withLive([.init(fault: .goaway(afterStreams: 5))]) { live in
            let count = 40
            var arguments = [
                "--silent", "--parallel", "--parallel-max", "20", "--http2", "--max-time", "20", "--cacert", live.caPath,
                "--output", "/dev/null", "--write-out", "%{http_code}\\n", "--data-binary", payload,
            ]
            for header in try LiveSimulator.apnsHeaders() { arguments += ["--header", header] }
            for index in 0..<count { arguments.append(live.url("/3/device/\(deviceToken(UInt8(0x80 + index)))")) }
            let result = try await runTool(curl, arguments)
            let codes = result.output.split(separator: "\n")
            let stats = try await eventually(live) { $0.goawaysSent > 0 }
            print(
                "curl after GOAWAYs: exit=\(result.status) \(stats.goawaysSent) GOAWAYs, \(stats.streamsRefusedByGoaway) "
                    + "refused, \(stats.connectionsAccepted) connections")
            // curl resends what a GOAWAY refused on a new connection. The curl CLI sometimes
            // gives up on a refused stream instead ("000"); what must hold is that nothing a
            // GOAWAY refused was processed: the simulator accepted exactly what curl saw succeed.
            let ok = codes.filter { $0 == "200" }.count
            XCTAssertTrue(codes.allSatisfy { $0 == "200" || $0 == "000" }, result.output)
            XCTAssertEqual(codes.count, count, result.output)
            XCTAssertGreaterThanOrEqual(ok, count - 5, result.output)
            XCTAssertEqual(stats.apnsAccepted, ok, "none processed twice, none processed unanswered")
            XCTAssertGreaterThanOrEqual(stats.goawaysSent, 1)
            XCTAssertGreaterThan(stats.connectionsAccepted, stats.goawaysSent)
            XCTAssertEqual(stats.requestsUnanswered, 0)
        }
    }

    func testResetWithStreamsInFlightAnswersNone() async throws {
        // Every APNs answer is held 300 ms; the connection is reset when its third request arrives:
        // requests 1 and 2 were processed but their answers are lost, 3 to 5 are never processed.
        try await withLive([
            .init(provider: "apns", fault: .delay(milliseconds: 300)),
            .init(fault: .resetConnection(atRequest: 3, processed: false), count: 1),
        ]) { live in
            let paths = (0..<5).map { "/3/device/\(deviceToken(UInt8(0x60 + $0)))" }
            let output = try await runTool(
                nghttp, try nghttpArguments(live, paths: paths, headers: LiveSimulator.apnsHeaders())
            ).output
            XCTAssertEqual(occurrences(":status:", in: output), 0, output)
            XCTAssertFalse(output.contains("recv GOAWAY"), "a reset, not a graceful close")
            let stats = try await eventually(live) { $0.requestsUnanswered >= 2 }
            XCTAssertEqual(stats.connectionsReset, 1)
            XCTAssertEqual(stats.apnsAccepted, 2, "processed before the reset")
            XCTAssertEqual(stats.requestsUnanswered, 2)
        }
    }

    func testResetAfterProcessingTellsDuplicatesApart() async throws {
        try await withLive([.init(fault: .resetConnection(atRequest: 3, processed: true), count: 1)]) { live in
            let ids = (0..<5).map { _ in UUID().uuidString.lowercased() }
            // Sequential transfers share one connection; the third is processed, then the connection is reset.
            func curlArguments(_ indices: [Int]) throws -> [String] {
                var arguments = ["--silent"]
                for (position, index) in indices.enumerated() {
                    if position > 0 { arguments.append("--next") }
                    arguments += [
                        "--http2", "--max-time", "20", "--cacert", live.caPath, "--output", "/dev/null",
                        "--write-out", "%{http_code}\\n", "--data-binary", payload,
                    ]
                    for header in try LiveSimulator.apnsHeaders(id: ids[index]) { arguments += ["--header", header] }
                    arguments.append(live.url("/3/device/\(deviceToken(UInt8(0x68 + index)))"))
                }
                return arguments
            }
            let first = try await runTool(curl, try curlArguments(Array(0..<5)))
            let codes = first.output.split(separator: "\n").map(String.init)
            XCTAssertEqual(codes.count, 5, first.output)
            let afterReset = try await eventually(live) { $0.requestsUnanswered >= 1 }
            XCTAssertEqual(afterReset.connectionsReset, 1)
            XCTAssertEqual(afterReset.apnsUnansweredIDs, [ids[2]: 1], "the third was processed, its answer lost")
            for index in [0, 1, 3, 4] {
                XCTAssertEqual(codes[index], "200")
                XCTAssertEqual(afterReset.apnsSendsByID[ids[index]], 1)
            }
            // curl itself may retry the third on a fresh connection; if not, the sender does.
            if codes[2] != "200" {
                let resend = try await runTool(curl, try curlArguments([2]))
                XCTAssertEqual(resend.output, "200\n")
            }
            let stats = live.simulator.stats()
            // The duplicate is exactly the notification whose answer was lost.
            XCTAssertEqual(stats.apnsSendsByID.filter { $0.value > 1 }, [ids[2]: 2])
            XCTAssertEqual(stats.apnsSendsByID.count, 5)
            XCTAssertEqual(stats.apnsAccepted, 6)
        }
    }

    func testSingleStreamUntilTheFirstValidToken() async throws {
        try await withLive([.init(fault: .singleStreamUntilValidToken)]) { live in
            let paths = (0..<3).map { "/3/device/\(deviceToken(UInt8(0x70 + $0)))" }
            let output = try await runTool(
                nghttp, try nghttpArguments(live, paths: paths, headers: LiveSimulator.apnsHeaders())
            ).output
            let initial = try XCTUnwrap(output.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1]"), output)
            let raised = try XCTUnwrap(output.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1000]"), output)
            XCTAssertLessThan(initial.lowerBound, raised.lowerBound)
            XCTAssertEqual(occurrences(":status: 200", in: output), 3, output)
            XCTAssertEqual(live.simulator.stats().settingsUpdatesSent, 1)
        }
    }

    func testSingleStreamAfterARejection() async throws {
        try await withLive([.init(fault: .singleStreamAfterRejection)]) { live in
            let paths = ["/3/device/zz"] + (0..<2).map { "/3/device/\(deviceToken(UInt8(0x78 + $0)))" }
            let output = try await runTool(
                nghttp, try nghttpArguments(live, paths: paths, headers: LiveSimulator.apnsHeaders())
            ).output
            let initial = try XCTUnwrap(output.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1000]"), output)
            let lowered = try XCTUnwrap(output.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1]"), output)
            XCTAssertLessThan(initial.lowerBound, lowered.lowerBound)
            XCTAssertEqual(occurrences(":status: 400", in: output), 1, output)
            XCTAssertEqual(occurrences(":status: 200", in: output), 2, output)
            XCTAssertEqual(live.simulator.stats().settingsUpdatesSent, 1)
        }
    }

    func testSlowAnswersPerProvider() async throws {
        try await withLive([.init(provider: "apns", fault: .delay(milliseconds: 400))]) { live in
            func timed(_ path: String, headers: [String]) async throws -> (code: String, seconds: Double) {
                var arguments = [
                    "--silent", "--http2", "--max-time", "20", "--cacert", live.caPath, "--output", "/dev/null",
                    "--write-out", "%{http_code} %{time_total} %{time_appconnect}", "--data-binary", payload,
                ]
                for header in headers { arguments += ["--header", header] }
                let fields = try await runTool(curl, arguments + [live.url(path)]).output.split(separator: " ")
                XCTAssertEqual(fields.count, 3)
                let total = Double(fields.count > 1 ? fields[1] : "") ?? 0
                let connected = Double(fields.count > 2 ? fields[2] : "") ?? 0
                return (String(fields.first ?? ""), total - connected)
            }
            let apns = try await timed("/3/device/\(deviceToken(0x7a))", headers: LiveSimulator.apnsHeaders())
            let fcm = try await timed("/v1/projects/\(TestCredentials.projectID)/messages:send", headers: [])
            XCTAssertEqual(apns.code, "200")
            XCTAssertGreaterThanOrEqual(apns.seconds, 0.4)
            XCTAssertEqual(fcm.code, "401")
            XCTAssertLessThan(fcm.seconds, apns.seconds)
        }
    }

    func testRetryAfterAndOAuthOutageOverHTTP2() async throws {
        try await withLive([
            .init(provider: "apns", fault: .httpError(status: 429, retryAfterSeconds: 3), count: 1),
            .init(provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: 1), count: 1),
        ]) { live in
            func send(_ path: String, headers: [String], data: String) async throws -> (code: String, headers: String) {
                let headerFile = live.directory.appendingPathComponent("h-\(UUID().uuidString)").path
                var arguments = [
                    "--silent", "--http2", "--max-time", "20", "--cacert", live.caPath, "--output", "/dev/null",
                    "--dump-header", headerFile, "--write-out", "%{http_code}", "--data-binary", data,
                ]
                for header in headers { arguments += ["--header", header] }
                let code = try await runTool(curl, arguments + [live.url(path)]).output
                return (code, (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "")
            }
            let apnsHeaders = try LiveSimulator.apnsHeaders()
            let throttled = try await send("/3/device/\(deviceToken(0x7b))", headers: apnsHeaders, data: payload)
            XCTAssertEqual(throttled.code, "429")
            XCTAssertTrue(throttled.headers.lowercased().contains("retry-after: 3"), throttled.headers)
            let next = try await send("/3/device/\(deviceToken(0x7b))", headers: apnsHeaders, data: payload)
            XCTAssertEqual(next.code, "200")

            let assertion = try TestCredentials.get().assertion(issuedAt: Date(), audience: live.simulator.tokenURI)
            let form = String(decoding: TestCredentials.tokenRequestBody(assertion: assertion), as: UTF8.self)
            let formHeader = ["content-type: application/x-www-form-urlencoded"]
            let down = try await send("/token", headers: formHeader, data: form)
            XCTAssertEqual(down.code, "503")
            XCTAssertTrue(down.headers.lowercased().contains("retry-after: 1"), down.headers)
            let recovered = try await send("/token", headers: formHeader, data: form)
            XCTAssertEqual(recovered.code, "200")
            let stats = live.simulator.stats()
            XCTAssertEqual(stats.count("apns", 429, "TooManyRequests"), 1)
            XCTAssertEqual(stats.count("oauth", 503, "temporarily_unavailable"), 1)
            XCTAssertEqual(stats.tokensIssued, 1)
        }
    }
}
