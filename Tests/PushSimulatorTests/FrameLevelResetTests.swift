import Foundation
import XCTest

@testable import PushSimulator

/// The frame-level path (fast mode) facing what well-behaved load tools never
/// send: a stream reset mid-request, trailers, a connection dropped with
/// streams open. Nothing of a reset request may be answered or counted, and
/// the connection and the server must go on serving.
final class FrameLevelResetTests: XCTestCase {
    func testResetStreamsTrailersAndADroppedConnection() async throws {
        try await LiveSimulator.with(try TestCredentials.get().configuration(fastMode: true)) { live in
            let session = try RawHTTP2Session(port: live.port, caPath: live.caPath)
            defer { session.close() }
            let apnsPath = "/3/device/\(deviceToken(4))"
            let ids = (0..<4).map { _ in UUID().uuidString.lowercased() }

            // Stream 1: an APNs send reset after part of its body; stream 3: a /token
            // request (gathered for the rules) reset the same way.
            session.sendRequest(stream: 1, path: apnsPath, headers: [("apns-id", ids[0])], endStream: false)
            session.sendData(stream: 1, #"{"aps":"#, endStream: false)
            session.sendReset(stream: 1)
            session.sendRequest(stream: 3, path: "/token", endStream: false)
            session.sendData(stream: 3, "grant_type=", endStream: false)
            session.sendReset(stream: 3)
            // Stream 5: a complete send whose END_STREAM comes with trailers.
            session.sendRequest(stream: 5, path: apnsPath, headers: [("apns-id", ids[1])], endStream: false)
            session.sendData(stream: 5, #"{"aps":{}}"#, endStream: false)
            session.sendTrailers(stream: 5, [("x-checksum", "1")])

            let answered = try await session.waitForFrames { $0.type == RawHTTP2Session.headers && $0.streamID == 5 }
            let frames = try XCTUnwrap(answered, "no answer on stream 5 after streams 1 and 3 were reset")
            let answer = try XCTUnwrap(frames.first { $0.type == RawHTTP2Session.headers && $0.streamID == 5 })
            XCTAssertEqual(answer.payload.first, 0x88, ":status 200 (HPACK static entry 8)")
            XCTAssertFalse(frames.contains { $0.streamID == 1 || $0.streamID == 3 }, "a reset stream was answered")

            // Stream 7 left open mid-body, stream 9 complete; then the connection drops.
            session.sendRequest(stream: 7, path: apnsPath, headers: [("apns-id", ids[2])], endStream: false)
            session.sendData(stream: 7, "{", endStream: false)
            session.sendRequest(stream: 9, path: apnsPath, headers: [("apns-id", ids[3])], endStream: true)
            let last = try await session.waitForFrames { $0.type == RawHTTP2Session.headers && $0.streamID == 9 }
            XCTAssertNotNil(last, "no answer on stream 9")
            session.close()

            // A new connection is served as before.
            let after = try await runTool(
                "/usr/bin/curl",
                [
                    "--silent", "--http2", "--max-time", "20", "--cacert", live.caPath, "--output", "/dev/null",
                    "--write-out", "%{http_code}", "--data-binary", "{}", live.url(apnsPath),
                ])
            XCTAssertEqual(after.output, "200")

            let stats = live.simulator.stats()
            XCTAssertEqual(stats.apnsAccepted, 3)
            XCTAssertEqual(stats.apnsSendsByID, [ids[1]: 1, ids[3]: 1])
            XCTAssertEqual(stats.tokensIssued, 0)
            XCTAssertEqual(stats.responses.keys.filter { $0.hasPrefix("oauth") }, [], "the reset /token request was answered")
            XCTAssertEqual(stats.requestsUnanswered, 0)
            XCTAssertEqual(stats.connectionsAccepted, 2)
        }
    }

    /// Scenarios set while a fast connection is open reach its next requests
    /// (the rules answer them, delays included); an answer still held back when
    /// the connection drops is counted as unanswered.
    func testScenariosSetAtRuntimeReachAnOpenConnection() async throws {
        try await LiveSimulator.with(try TestCredentials.get().configuration(fastMode: true)) { live in
            let session = try RawHTTP2Session(port: live.port, caPath: live.caPath)
            defer { session.close() }
            let path = "/3/device/\(deviceToken(6))"
            func answered(_ stream: UInt32) -> (RawHTTP2Session.Frame) -> Bool {
                { $0.type == RawHTTP2Session.headers && $0.streamID == stream }
            }
            session.sendRequest(stream: 1, path: path, endStream: true)
            let first = try await session.waitForFrames(until: answered(1))
            XCTAssertNotNil(first, "no answer on stream 1")

            try live.simulator.setScenarios([.init(provider: "apns", fault: .delay(milliseconds: 400))])
            let started = Date()
            session.sendRequest(stream: 3, path: path, endStream: true)
            let delayed = try await session.waitForFrames(until: answered(3))
            XCTAssertNotNil(delayed, "no answer on stream 3")
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.35, "the delay scenario was not applied")

            let heldID = UUID().uuidString.lowercased()
            session.sendRequest(stream: 5, path: path, headers: [("apns-id", heldID)], endStream: true)
            try await Task.sleep(for: .milliseconds(100))
            session.close()
            try await Task.sleep(for: .milliseconds(600))

            let stats = live.simulator.stats()
            XCTAssertEqual(stats.apnsAccepted, 3, "processed, answered or not")
            XCTAssertEqual(stats.requestsUnanswered, 1)
            XCTAssertEqual(stats.apnsUnansweredIDs, [heldID: 1])
        }
    }
}
