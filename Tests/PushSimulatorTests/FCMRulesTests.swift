import Foundation
import XCTest

@testable import PushSimulator

final class FCMRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let token = "fcm-token_0123456789:APA91bHabcdef"

    private func makeRules(deadTokens: [String: Date] = [:]) throws -> (SimulatorRules, accessToken: String) {
        let credentials = try TestCredentials.get()
        var configuration = credentials.configuration()
        configuration.deadTokens = deadTokens
        let rules = try SimulatorRules(configuration: configuration)
        let response = rules.respond(
            to: SimulatorRequest(
                method: "POST", path: "/token",
                body: TestCredentials.tokenRequestBody(assertion: try credentials.assertion(issuedAt: now))),
            now: now)
        let accessToken = try XCTUnwrap(try json(response)["access_token"] as? String, response.bodyText)
        return (rules, accessToken)
    }

    private func send(
        _ body: String, rules: SimulatorRules, accessToken: String?, project: String = TestCredentials.projectID,
        at time: Date? = nil
    ) -> SimulatorResponse {
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        let request = SimulatorRequest(
            method: "POST", path: "/v1/projects/\(project)/messages:send", headers: headers, body: Array(body.utf8))
        return rules.respond(to: request, now: time ?? now)
    }

    /// Checks Google's envelope and returns the FCM errorCode detail, if any.
    @discardableResult
    private func assertGoogleError(
        _ response: SimulatorResponse, _ code: Int, _ status: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> String? {
        XCTAssertEqual(response.status, code, response.bodyText, file: file, line: line)
        let error = try XCTUnwrap(try json(response)["error"] as? [String: Any], file: file, line: line)
        XCTAssertEqual(error["code"] as? Int, code, file: file, line: line)
        XCTAssertEqual(error["status"] as? String, status, file: file, line: line)
        XCTAssertNotNil(error["message"] as? String, file: file, line: line)
        let details = error["details"] as? [[String: Any]] ?? []
        let fcmError = details.first { $0["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError" }
        return fcmError?["errorCode"] as? String
    }

    func testSendSucceeds() throws {
        let (rules, accessToken) = try makeRules()
        let response = send(
            #"{"message":{"token":"\#(token)","notification":{"title":"Hi"},"data":{"k":"v"}}}"#, rules: rules,
            accessToken: accessToken)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let name = try XCTUnwrap(try json(response)["name"] as? String)
        XCTAssertTrue(name.hasPrefix("projects/\(TestCredentials.projectID)/messages/"), name)
        XCTAssertEqual(rules.stats().fcmAccepted, 1)
        XCTAssertEqual(rules.stats().count("fcm", 200, "OK"), 1)

        let topic = send(#"{"message":{"topic":"news"}}"#, rules: rules, accessToken: accessToken)
        XCTAssertEqual(topic.status, 200)
        let validate = send(
            #"{"validate_only":true,"message":{"token":"\#(token)"}}"#, rules: rules, accessToken: accessToken)
        XCTAssertEqual(validate.status, 200)
        XCTAssertEqual(rules.stats().fcmAccepted, 2, "validate_only is not a send")
    }

    func testAuthentication() throws {
        let (rules, accessToken) = try makeRules()
        let body = #"{"message":{"token":"\#(token)"}}"#
        try assertGoogleError(send(body, rules: rules, accessToken: nil), 401, "UNAUTHENTICATED")
        try assertGoogleError(send(body, rules: rules, accessToken: "ya29.unknown"), 401, "UNAUTHENTICATED")
        try assertGoogleError(
            send(body, rules: rules, accessToken: accessToken, at: now.addingTimeInterval(3601)), 401, "UNAUTHENTICATED")
        let mismatch = try assertGoogleError(
            send(body, rules: rules, accessToken: accessToken, project: TestCredentials.otherProjectID), 403,
            "PERMISSION_DENIED")
        XCTAssertEqual(mismatch, "SENDER_ID_MISMATCH")
        XCTAssertEqual(rules.stats().count("fcm", 401, "UNAUTHENTICATED"), 3)
        XCTAssertEqual(rules.stats().count("fcm", 403, "SENDER_ID_MISMATCH"), 1)
    }

    func testInvalidArguments() throws {
        let (rules, accessToken) = try makeRules()
        let bodies = [
            #"{"message":{}}"#,
            #"{"message":{"token":"\#(token)","topic":"news"}}"#,
            #"{"message":{"token":"\#(token)","data":{"count":3}}}"#,
            #"{"message":{"token":"\#(token)","data":"x"}}"#,
            #"{"message":{"token":"short"}}"#,
            #"{"message":{"token":"has spaces in it, which is not allowed"}}"#,
            #"{"message":{"token":"\#(token)","bogus":1}}"#,
            #"{"msg":{}}"#,
            #"{"message":"#,
            #"{"message":{"token":"\#(token)","data":{"k":"\#(String(repeating: "x", count: 4096))"}}}"#,
        ]
        for body in bodies {
            let errorCode = try assertGoogleError(
                send(body, rules: rules, accessToken: accessToken), 400, "INVALID_ARGUMENT")
            XCTAssertEqual(errorCode, "INVALID_ARGUMENT", body)
        }
        XCTAssertEqual(rules.stats().count("fcm", 400, "INVALID_ARGUMENT"), bodies.count)
        XCTAssertEqual(rules.stats().fcmAccepted, 0)
    }

    func testDeadTokenIsUnregistered() throws {
        let (rules, accessToken) = try makeRules(deadTokens: [token: now])
        let body = #"{"message":{"token":"\#(token)"}}"#
        XCTAssertEqual(try assertGoogleError(send(body, rules: rules, accessToken: accessToken), 404, "NOT_FOUND"), "UNREGISTERED")
        let other = "another-token_0123456789abcdef"
        XCTAssertEqual(send(#"{"message":{"token":"\#(other)"}}"#, rules: rules, accessToken: accessToken).status, 200)
        rules.markDead(token: other, since: now)
        XCTAssertEqual(send(#"{"message":{"token":"\#(other)"}}"#, rules: rules, accessToken: accessToken).status, 404)
        XCTAssertEqual(rules.stats().count("fcm", 404, "UNREGISTERED"), 2)
    }

    func testScenario503Storm() throws {
        let credentials = try TestCredentials.get()
        var configuration = credentials.configuration()
        configuration.scenarios = [.init(provider: "fcm", fault: .httpError(status: 503, retryAfterSeconds: 30))]
        let rules = try SimulatorRules(configuration: configuration)
        let tokenResponse = rules.respond(
            to: SimulatorRequest(
                method: "POST", path: "/token",
                body: TestCredentials.tokenRequestBody(assertion: try credentials.assertion(issuedAt: now))),
            now: now)
        XCTAssertEqual(tokenResponse.status, 200, "scenarios never touch the token endpoint")
        let accessToken = try XCTUnwrap(try json(tokenResponse)["access_token"] as? String)
        let response = send(#"{"message":{"token":"\#(token)"}}"#, rules: rules, accessToken: accessToken)
        try assertGoogleError(response, 503, "UNAVAILABLE")
        XCTAssertEqual(response.header("retry-after"), "30")
    }
}
