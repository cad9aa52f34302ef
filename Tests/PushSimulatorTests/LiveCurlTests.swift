import Foundation
import Logging
import XCTest

@testable import PushSimulator

/// Starts the real server on port 0 with a generated CA and talks to it with
/// the curl CLI over TLS + HTTP/2 (ALPN h2), as libcurl-based workers will.
final class LiveCurlTests: XCTestCase {
    struct CurlResult {
        let status: Int
        let httpVersion: String
        let headers: String
        let body: String
    }

    private var simulator: PushSimulator?
    private var directory: URL?

    override func setUp() async throws {
        let version = try await Self.run(["-V"])
        try XCTSkipUnless(version.contains("HTTP2"), "curl without HTTP/2 support")
        let credentials = try TestCredentials.get()
        var configuration = credentials.configuration()
        configuration.deadTokens = [deviceToken(9): Date(timeIntervalSince1970: 1_700_000_000)]
        let simulator = PushSimulator(configuration: configuration, logger: Logger(label: "test.simulator"))
        try await simulator.start()
        self.simulator = simulator
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try simulator.caCertificatePEM.write(to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        self.directory = directory
    }

    override func tearDown() async throws {
        try await simulator?.shutdown()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs curl (without blocking the cooperative pool) and expects it to succeed.
    static func run(_ arguments: [String]) async throws -> String {
        let result = try await runTool("/usr/bin/curl", arguments)
        XCTAssertEqual(result.status, 0, "curl \(arguments.joined(separator: " ")) failed")
        return result.output
    }

    private func curl(
        _ path: String, headers: [String] = [], data: String, extra: [String] = []
    ) async throws -> CurlResult {
        let simulator = try XCTUnwrap(simulator)
        let directory = try XCTUnwrap(directory)
        let headerFile = directory.appendingPathComponent("headers-\(UUID().uuidString)").path
        let bodyFile = directory.appendingPathComponent("body-\(UUID().uuidString)").path
        var arguments = [
            "--silent", "--http2", "--max-time", "20", "--cacert", directory.appendingPathComponent("ca.pem").path,
            "--dump-header", headerFile, "--output", bodyFile, "--write-out", "%{http_code} %{http_version}",
            "--data-binary", data,
        ]
        for header in headers { arguments += ["--header", header] }
        arguments += extra
        arguments.append("https://127.0.0.1:\(simulator.port)\(path)")
        let summary = try await Self.run(arguments).split(separator: " ")
        XCTAssertEqual(summary.count, 2)
        return CurlResult(
            status: Int(summary.first ?? "") ?? -1, httpVersion: String(summary.last ?? ""),
            headers: (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "",
            body: (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "")
    }

    private func apnsHeaders(id: String? = nil) throws -> [String] {
        let jwt = try TestCredentials.get().providerToken(issuedAt: Date())
        var headers = [
            "authorization: bearer \(jwt)", "apns-topic: \(TestCredentials.topic)", "apns-push-type: alert",
            "apns-priority: 10",
        ]
        if let id { headers.append("apns-id: \(id)") }
        return headers
    }

    func testAPNsSuccessAndUnregisteredOverHTTP2() async throws {
        let id = UUID().uuidString.lowercased()
        let payload = #"{"aps":{"alert":"hello"}}"#
        let ok = try await curl("/3/device/\(deviceToken(1))", headers: try apnsHeaders(id: id), data: payload)
        XCTAssertEqual(ok.status, 200, ok.body)
        XCTAssertEqual(ok.httpVersion, "2")
        XCTAssertTrue(ok.headers.lowercased().contains("apns-id: \(id)"), ok.headers)
        XCTAssertEqual(ok.body, "")

        let gone = try await curl("/3/device/\(deviceToken(9))", headers: try apnsHeaders(), data: payload)
        XCTAssertEqual(gone.status, 410)
        XCTAssertEqual(gone.body, #"{"reason":"Unregistered","timestamp":1700000000000}"#)

        let stats = try XCTUnwrap(simulator).stats()
        XCTAssertEqual(stats.apnsAccepted, 1)
        XCTAssertEqual(stats.apnsSendsByID[id], 1)
        XCTAssertEqual(stats.count("apns", 410, "Unregistered"), 1)
    }

    func testManyMultiplexedStreamsOnOneConnection() async throws {
        let count = 40
        let directory = try XCTUnwrap(directory)
        var arguments = [
            "--silent", "--http2", "--parallel", "--parallel-max", "40", "--max-time", "30",
            "--cacert", directory.appendingPathComponent("ca.pem").path, "--write-out", "%{http_code} %{num_connects}\\n",
            "--output", "/dev/null", "--data-binary", #"{"aps":{"alert":"hi"}}"#,
        ]
        for header in try apnsHeaders() { arguments += ["--header", header] }
        let port = try XCTUnwrap(simulator).port
        for index in 0..<count { arguments.append("https://127.0.0.1:\(port)/3/device/\(deviceToken(UInt8(index + 10)))") }
        let lines = try await Self.run(arguments).split(separator: "\n")
        XCTAssertEqual(lines.count, count)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("200 ") }, lines.joined(separator: ","))
        let connects = lines.compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
        XCTAssertLessThan(connects, count / 2, "streams should share connections (HTTP/2 multiplexing)")
        let stats = try XCTUnwrap(simulator).stats()
        XCTAssertEqual(stats.apnsAccepted, count)
        XCTAssertLessThan(stats.connectionsAccepted, count / 2)
    }

    func testOAuthTokenThenFCMSend() async throws {
        let simulator = try XCTUnwrap(simulator)
        let credentials = try TestCredentials.get()
        let assertion = try credentials.assertion(issuedAt: Date(), audience: simulator.tokenURI)
        let token = try await curl(
            "/token", headers: ["content-type: application/x-www-form-urlencoded"],
            data: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
        XCTAssertEqual(token.status, 200, token.body)
        let tokenBody = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(token.body.utf8)) as? [String: Any])
        let accessToken = try XCTUnwrap(tokenBody["access_token"] as? String)

        let send = try await curl(
            "/v1/projects/\(TestCredentials.projectID)/messages:send",
            headers: ["authorization: Bearer \(accessToken)", "content-type: application/json"],
            data: #"{"message":{"token":"fcm-device-token_0123456789","data":{"k":"v"}}}"#)
        XCTAssertEqual(send.status, 200, send.body)
        XCTAssertEqual(send.httpVersion, "2")
        XCTAssertTrue(send.body.contains("projects/\(TestCredentials.projectID)/messages/"), send.body)

        let unauthenticated = try await curl(
            "/v1/projects/\(TestCredentials.projectID)/messages:send", headers: ["content-type: application/json"],
            data: #"{"message":{"token":"fcm-device-token_0123456789"}}"#)
        XCTAssertEqual(unauthenticated.status, 401)
        XCTAssertTrue(unauthenticated.body.contains("UNAUTHENTICATED"), unauthenticated.body)

        let stats = simulator.stats()
        XCTAssertEqual(stats.tokensIssued, 1)
        XCTAssertEqual(stats.fcmAccepted, 1)
        XCTAssertEqual(stats.count("fcm", 401, "UNAUTHENTICATED"), 1)
    }
}
