import Foundation
import XCTest

@testable import PushSimulator

/// Fast mode without scenarios serves connections at the frame level (no
/// stream multiplexer). These drive that path over real TLS + HTTP/2 with curl
/// and h2load and check it answers as the rules do in fast mode.
final class FrameLevelLiveTests: XCTestCase {
    struct Answer {
        let status: Int
        let headers: String
        let body: String

        /// The value of a response header (names compared case-insensitively).
        func header(_ name: String) -> String? {
            for line in headers.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    private func fastConfiguration() throws -> SimulatorConfiguration {
        try TestCredentials.get().configuration(fastMode: true)
    }

    /// One curl request over HTTP/2; `dataFile` sends a file's bytes as the body.
    private func curl(
        _ live: LiveSimulator, _ path: String, headers: [String] = [], data: String = "", dataFile: String? = nil
    ) async throws -> Answer {
        let id = UUID().uuidString
        let headerFile = live.directory.appendingPathComponent("headers-\(id)").path
        let bodyFile = live.directory.appendingPathComponent("body-\(id)").path
        var arguments = [
            "--silent", "--http2", "--max-time", "30", "--cacert", live.caPath, "--dump-header", headerFile,
            "--output", bodyFile, "--write-out", "%{http_code} %{http_version}",
            "--data-binary", dataFile.map { "@" + $0 } ?? data,
        ]
        for header in headers { arguments += ["--header", header] }
        arguments.append(live.url(path))
        let result = try await runTool("/usr/bin/curl", arguments)
        XCTAssertEqual(result.status, 0, "curl \(path) failed")
        XCTAssertEqual(result.output.split(separator: " ").last, "2", "not HTTP/2")
        return Answer(
            status: Int(result.output.split(separator: " ").first ?? "") ?? -1,
            headers: (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "",
            body: (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "")
    }

    func testAPNsEchoesAValidIDAndMakesUpTheOthers() async throws {
        try await LiveSimulator.with(try fastConfiguration()) { live in
            let path = "/3/device/\(deviceToken(1))"
            let payload = #"{"aps":{"alert":"hi"}}"#
            let sentID = UUID().uuidString  // upper case: echoed exactly as sent
            let echoed = try await curl(live, path, headers: ["apns-id: \(sentID)"], data: payload)
            XCTAssertEqual(echoed.status, 200)
            XCTAssertEqual(echoed.header("apns-id"), sentID)
            XCTAssertEqual(echoed.body, "")

            var madeUp: [String] = []
            for header in ["apns-topic: \(TestCredentials.topic)", "apns-id: not-a-uuid"] {
                let answer = try await curl(live, path, headers: [header], data: payload)
                XCTAssertEqual(answer.status, 200)
                let id = try XCTUnwrap(answer.header("apns-id"))
                XCTAssertTrue(SimulatorRules.isUUID(id), id)
                XCTAssertEqual(id, id.lowercased())
                XCTAssertEqual(Array(id)[14], "4", "a version-4 UUID: \(id)")
                madeUp.append(id)
            }
            XCTAssertNotEqual(madeUp[0], madeUp[1])

            let stats = live.simulator.stats()
            XCTAssertEqual(stats.apnsAccepted, 3)
            XCTAssertEqual(stats.count("apns", 200, "OK"), 3)
            XCTAssertEqual(stats.apnsSendsByID, [sentID: 1], "only valid ids are counted")
        }
    }

    func testOAuthTokenThenFCMSendAndUnknownPaths() async throws {
        try await LiveSimulator.with(try fastConfiguration()) { live in
            let credentials = try TestCredentials.get()
            let assertion = try credentials.assertion(issuedAt: Date(), audience: live.simulator.tokenURI)
            let token = try await curl(
                live, "/token", headers: ["content-type: application/x-www-form-urlencoded"],
                data: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
            XCTAssertEqual(token.status, 200, token.body)
            XCTAssertTrue(token.body.contains("\"access_token\":\"ya29.sim-"), token.body)

            let sendPath = "/v1/projects/\(TestCredentials.projectID)/messages:send"
            var names: [String] = []
            for _ in 0..<2 {
                let send = try await curl(live, sendPath, data: #"{"message":{"token":"t"}}"#)
                XCTAssertEqual(send.status, 200, send.body)
                XCTAssertEqual(send.header("content-type"), "application/json; charset=UTF-8")
                let prefix = #"{"name":"projects/\#(TestCredentials.projectID)/messages/0:"#
                XCTAssertTrue(send.body.hasPrefix(prefix) && send.body.hasSuffix(#"%sim"}"#), send.body)
                names.append(send.body)
            }
            XCTAssertNotEqual(names[0], names[1])

            let wrongFCMPath = try await curl(live, "/v1/projects/\(TestCredentials.projectID)/messages:nope", data: "{}")
            let expected404 = SimulatorRules.googleError(
                code: 404, message: "Requested entity was not found.", status: "NOT_FOUND")
            XCTAssertEqual(wrongFCMPath.status, 404)
            XCTAssertEqual(wrongFCMPath.body, expected404.bodyText)

            let other = try await curl(live, "/elsewhere", data: "{}")
            XCTAssertEqual(other.status, 404)
            XCTAssertEqual(other.body, #"{"reason":"BadPath"}"#)

            let stats = live.simulator.stats()
            XCTAssertEqual(stats.tokensIssued, 1)
            XCTAssertEqual(stats.fcmAccepted, 2)
            XCTAssertEqual(stats.count("fcm", 200, "OK"), 2)
            XCTAssertEqual(stats.count("fcm", 404, "NOT_FOUND"), 1)
            XCTAssertEqual(stats.count("other", 404, "BadPath"), 1)
        }
    }

    /// Bodies of many 16 KiB DATA frames, beyond the 64 KiB stream window: the
    /// rules see a gathered body whole (up to `maxBufferedBody`), and fast sends
    /// ignore theirs, but both need the windows kept open to finish at all.
    func testLargeBodiesAreGatheredOrSkipped() async throws {
        try await LiveSimulator.with(try fastConfiguration()) { live in
            let credentials = try TestCredentials.get()
            let assertion = try credentials.assertion(issuedAt: Date(), audience: live.simulator.tokenURI)
            let grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
            let form = ["content-type: application/x-www-form-urlencoded"]

            // 300 KB with the grant first: all of it must arrive for the token to be issued.
            let padded = try live.file("padded.form", grant + "&padding=" + String(repeating: "x", count: 300_000))
            let token = try await curl(live, "/token", headers: form, dataFile: padded)
            XCTAssertEqual(token.status, 200, token.body)

            // 1.5 MB with the grant last: cut at maxBufferedBody, as on the per-stream path.
            let cut = try live.file("cut.form", "padding=" + String(repeating: "x", count: 1_500_000) + "&" + grant)
            let refused = try await curl(live, "/token", headers: form, dataFile: cut)
            XCTAssertEqual(refused.status, 400, refused.body)
            XCTAssertTrue(refused.body.contains("unsupported_grant_type"), refused.body)

            let big = try live.file("big.json", #"{"aps":{"alert":""# + String(repeating: "y", count: 2_000_000) + #""}}"#)
            let apns = try await curl(live, "/3/device/\(deviceToken(2))", dataFile: big)
            XCTAssertEqual(apns.status, 200)

            let stats = live.simulator.stats()
            XCTAssertEqual(stats.tokensIssued, 1)
            XCTAssertEqual(stats.apnsAccepted, 1)
        }
    }

    /// Far more than the 64 KiB initial connection window on one connection,
    /// APNs then FCM: every request answered, every one counted.
    func testManyRequestsOnOneConnectionKeepTheWindowOpen() async throws {
        let h2load = "/usr/bin/h2load"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: h2load), "h2load not installed")
        try await LiveSimulator.with(try fastConfiguration()) { live in
            let requests = 3_000
            let body = try live.file("body.json", #"{"aps":{"alert":""# + String(repeating: "z", count: 2_000) + #""}}"#)
            let targets = [
                "/3/device/\(deviceToken(3))", "/v1/projects/\(TestCredentials.projectID)/messages:send",
            ]
            for target in targets {
                let result = try await runTool(
                    h2load, ["-n", "\(requests)", "-c", "1", "-m", "50", "-N", "20", "-d", body, live.url(target)])
                XCTAssertEqual(result.status, 0, result.output)
                XCTAssertTrue(result.output.contains("\(requests) succeeded"), result.output)
                XCTAssertTrue(result.output.contains("status codes: \(requests) 2xx"), result.output)
            }
            let stats = live.simulator.stats()
            XCTAssertEqual(stats.apnsAccepted, requests)
            XCTAssertEqual(stats.fcmAccepted, requests)
            XCTAssertEqual(stats.connectionsAccepted, 2)
        }
    }
}
