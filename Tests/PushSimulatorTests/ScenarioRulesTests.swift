import Foundation
import XCTest

@testable import PushSimulator

/// Answer-level scenarios and bounded state, without sockets.
final class ScenarioRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    private func apnsRequest(at date: Date) throws -> SimulatorRequest {
        let jwt = try TestCredentials.get().providerToken(issuedAt: now)
        return SimulatorRequest(
            method: "POST", path: "/3/device/\(deviceToken())",
            headers: [("authorization", "bearer \(jwt)"), ("apns-topic", TestCredentials.topic)],
            body: Array(#"{"aps":{}}"#.utf8))
    }

    private func tokenRequest() throws -> SimulatorRequest {
        let assertion = try TestCredentials.get().assertion(issuedAt: now)
        return SimulatorRequest(
            method: "POST", path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
            body: TestCredentials.tokenRequestBody(assertion: assertion))
    }

    private func rules() throws -> SimulatorRules {
        try SimulatorRules(configuration: TestCredentials.get().configuration())
    }

    func testShareSpreadsA503StormEvenly() throws {
        let rules = try rules()
        try rules.setScenarios(
            [.init(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: 2), share: 0.5)], now: now)
        let answers = try (0..<6).map { _ in rules.respond(to: try apnsRequest(at: now), now: now) }
        XCTAssertEqual(answers.map(\.status), [200, 503, 200, 503, 200, 503])
        XCTAssertEqual(answers[1].header("retry-after"), "2")
        XCTAssertEqual(try json(answers[1])["reason"] as? String, "ServiceUnavailable")
    }

    func testTimeWindowCountsFromSetScenarios() throws {
        let rules = try rules()
        try rules.setScenarios(
            [.init(fault: .httpError(status: 503, retryAfterSeconds: nil), startSeconds: 10, durationSeconds: 5)],
            now: now)
        let statuses = try [0, 9.9, 10, 14.9, 15, 30].map { offset in
            rules.respond(to: try apnsRequest(at: now), now: now.addingTimeInterval(offset)).status
        }
        XCTAssertEqual(statuses, [200, 200, 503, 503, 200, 200])
        XCTAssertEqual(rules.scenarios.count, 1)
    }

    func testOAuthEndpointDownForACount() throws {
        let rules = try rules()
        try rules.setScenarios(
            [.init(provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: 1), count: 2)], now: now)
        let answers = try (0..<3).map { _ in rules.respond(to: try tokenRequest(), now: now) }
        XCTAssertEqual(answers.map(\.status), [503, 503, 200])
        XCTAssertEqual(try json(answers[0])["error"] as? String, "temporarily_unavailable")
        XCTAssertEqual(answers[0].header("retry-after"), "1")
        XCTAssertEqual(rules.stats().tokensIssued, 1)
        // An OAuth scenario leaves APNs alone, and an unscoped one leaves OAuth alone.
        XCTAssertEqual(rules.respond(to: try apnsRequest(at: now), now: now).status, 200)
        try rules.setScenarios([.init(fault: .httpError(status: 503, retryAfterSeconds: nil))], now: now)
        XCTAssertEqual(rules.respond(to: try tokenRequest(), now: now).status, 200)
        XCTAssertEqual(rules.respond(to: try apnsRequest(at: now), now: now).status, 503)
    }

    func testDelayIsReportedToTheTransport() throws {
        let rules = try rules()
        try rules.setScenarios([.init(provider: "apns", fault: .delay(milliseconds: 250), afterRequests: 1)], now: now)
        let first = rules.answer(to: try apnsRequest(at: now), now: now)
        let second = rules.answer(to: try apnsRequest(at: now), now: now)
        let oauth = rules.answer(to: try tokenRequest(), now: now)
        XCTAssertEqual(first.delayMilliseconds, 0)
        XCTAssertEqual(second.delayMilliseconds, 250)
        XCTAssertEqual(second.response.status, 200)
        XCTAssertTrue(second.validCredential)
        XCTAssertEqual(oauth.delayMilliseconds, 0)
    }

    func testScenarioValidationNamesTheKey() throws {
        let rules = try rules()
        let bad: [(SimulatorScenario, String)] = [
            (.init(provider: "hms", fault: .delay(milliseconds: 1)), "scenarios[0].provider"),
            (.init(fault: .goaway(afterStreams: 0)), "scenarios[0].fault.goaway.afterStreams"),
            (.init(fault: .httpError(status: 200, retryAfterSeconds: nil)), "scenarios[0].fault.httpError.status"),
            (.init(fault: .delay(milliseconds: 5), share: 0), "scenarios[0].share"),
            (.init(fault: .resetConnection(atRequest: 0, processed: true)), "scenarios[0].fault.resetConnection.atRequest"),
        ]
        for (scenario, key) in bad {
            XCTAssertThrowsError(try rules.setScenarios([scenario])) { error in
                XCTAssertTrue("\(error)".contains(key), "\(error)")
            }
        }
    }

    func testNewFaultsDecodeFromJSON() throws {
        let json = """
            [{"fault": {"goaway": {"afterStreams": 10}}},
             {"fault": {"resetConnection": {"atRequest": 3, "processed": true}}, "count": 1},
             {"fault": {"singleStreamUntilValidToken": {}}},
             {"fault": {"singleStreamAfterRejection": {}}},
             {"provider": "apns", "fault": {"delay": {"milliseconds": 200}}, "share": 0.25},
             {"provider": "oauth", "fault": {"httpError": {"status": 503}}, "startSeconds": 5, "durationSeconds": 60}]
            """
        let scenarios = try JSONDecoder().decode([SimulatorScenario].self, from: Data(json.utf8))
        XCTAssertEqual(
            scenarios,
            [
                .init(fault: .goaway(afterStreams: 10)),
                .init(fault: .resetConnection(atRequest: 3, processed: true), count: 1),
                .init(fault: .singleStreamUntilValidToken),
                .init(fault: .singleStreamAfterRejection),
                .init(provider: "apns", fault: .delay(milliseconds: 200), share: 0.25),
                .init(
                    provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: nil), startSeconds: 5,
                    durationSeconds: 60),
            ])
        let roundTrip = try JSONDecoder().decode([SimulatorScenario].self, from: JSONEncoder().encode(scenarios))
        XCTAssertEqual(roundTrip, scenarios)
        try SimulatorConfiguration.validate(scenarios: scenarios)
    }

    func testSendIDRecordingIsBounded() throws {
        var configuration = try TestCredentials.get().configuration()
        configuration.maxRecordedSendIDs = 2
        let rules = try SimulatorRules(configuration: configuration)
        for _ in 0..<4 {
            var request = try apnsRequest(at: now)
            request.headers.append(("apns-id", UUID().uuidString))
            XCTAssertEqual(rules.respond(to: request, now: now).status, 200)
        }
        XCTAssertEqual(rules.stats().apnsSendsByID.count, 2)
        XCTAssertEqual(rules.stats().apnsSendIDsNotRecorded, 2)
        XCTAssertEqual(rules.stats().apnsAccepted, 4)

        configuration.recordSendIDs = false
        let off = try SimulatorRules(configuration: configuration)
        var request = try apnsRequest(at: now)
        request.headers.append(("apns-id", UUID().uuidString))
        _ = off.respond(to: request, now: now)
        XCTAssertTrue(off.stats().apnsSendsByID.isEmpty)
        XCTAssertEqual(off.stats().apnsSendIDsNotRecorded, 1)
    }

    func testExpiredAccessTokensArePruned() {
        let state = SimulatorState(deadTokens: [:])
        let expired = SimulatorState.AccessGrant(projectID: "p", clientEmail: "e", expires: now.addingTimeInterval(-1))
        for index in 0..<1024 { state.issue(accessToken: "old-\(index)", grant: expired, now: now) }
        XCTAssertEqual(state.accessTokenCount, 1024)
        let live = SimulatorState.AccessGrant(projectID: "p", clientEmail: "e", expires: now.addingTimeInterval(3600))
        state.issue(accessToken: "new", grant: live, now: now)
        XCTAssertEqual(state.accessTokenCount, 1)
        XCTAssertNotNil(state.grant(forAccessToken: "new"))
    }
}
