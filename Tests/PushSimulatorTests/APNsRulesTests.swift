import Crypto
import Foundation
import XCTest

@testable import PushSimulator

final class APNsRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let payload = Array(#"{"aps":{"alert":{"title":"Hi","body":"There"},"sound":"default"}}"#.utf8)

    private func request(
        token: String = deviceToken(), method: String = "POST", headers: [(String, String)]? = nil,
        extraHeaders: [(String, String)] = [], body: [UInt8]? = nil, providerToken: String? = nil
    ) throws -> SimulatorRequest {
        let credentials = try TestCredentials.get()
        let jwt = try providerToken ?? credentials.providerToken(issuedAt: now.addingTimeInterval(-60))
        let base: [(String, String)] =
            headers ?? [
                ("authorization", "bearer \(jwt)"), ("apns-topic", TestCredentials.topic),
                ("apns-push-type", "alert"),
            ]
        return SimulatorRequest(
            method: method, path: "/3/device/\(token)", headers: (base + extraHeaders).map { ($0.0, $0.1) },
            body: body ?? payload)
    }

    private func rules(topics: [String] = [TestCredentials.topic], fastMode: Bool = false) throws -> SimulatorRules {
        try SimulatorRules(configuration: TestCredentials.get().configuration(topics: topics, fastMode: fastMode))
    }

    private func assertReason(
        _ response: SimulatorResponse, _ status: Int, _ reason: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(response.status, status, response.bodyText, file: file, line: line)
        XCTAssertEqual(try json(response)["reason"] as? String, reason, file: file, line: line)
        XCTAssertNotNil(response.header("apns-id"), file: file, line: line)
    }

    func testSuccessEchoesApnsIDWithEmptyBody() throws {
        let rules = try rules()
        let id = "5E9F1A2B-0C3D-4E5F-8A9B-0C1D2E3F4A5B"
        let response = rules.respond(to: try request(extraHeaders: [("apns-id", id)]), now: now)
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertTrue(response.body.isEmpty)
        XCTAssertEqual(response.header("apns-id"), id)
        let stats = rules.stats()
        XCTAssertEqual(stats.apnsAccepted, 1)
        XCTAssertEqual(stats.apnsSendsByID[id], 1)
        XCTAssertEqual(stats.count("apns", 200, "OK"), 1)
    }

    func testGeneratesLowercaseApnsIDWhenAbsent() throws {
        let response = try rules().respond(to: try request(), now: now)
        XCTAssertEqual(response.status, 200)
        let id = try XCTUnwrap(response.header("apns-id"))
        XCTAssertTrue(SimulatorRules.isUUID(id))
        XCTAssertEqual(id, id.lowercased())
    }

    func testRepeatedApnsIDIsCounted() throws {
        let rules = try rules()
        let id = UUID().uuidString
        for _ in 0..<3 { _ = rules.respond(to: try request(extraHeaders: [("apns-id", id)]), now: now) }
        XCTAssertEqual(rules.stats().apnsSendsByID[id], 3)
    }

    func testBadDeviceTokens() throws {
        let rules = try rules()
        for token in ["abc", String(repeating: "z", count: 64), String(repeating: "a", count: 65),
            String(repeating: "a", count: 202)]
        {
            try assertReason(rules.respond(to: try request(token: token), now: now), 400, "BadDeviceToken")
        }
        XCTAssertEqual(rules.respond(to: try request(token: String(repeating: "AB", count: 50)), now: now).status, 200)
        let missing = SimulatorRequest(method: "POST", path: "/3/device/", headers: [], body: payload)
        try assertReason(rules.respond(to: missing, now: now), 400, "MissingDeviceToken")
        XCTAssertEqual(rules.stats().count("apns", 400, "BadDeviceToken"), 4)
    }

    func testDeadTokenAnswers410WithTimestamp() throws {
        let credentials = try TestCredentials.get()
        var configuration = credentials.configuration()
        let since = Date(timeIntervalSince1970: 1_700_000_000.250)
        configuration.deadTokens = [deviceToken(7).uppercased(): since]
        let rules = try SimulatorRules(configuration: configuration)
        let response = rules.respond(to: try request(token: deviceToken(7)), now: now)
        try assertReason(response, 410, "Unregistered")
        XCTAssertEqual((try json(response)["timestamp"] as? NSNumber)?.int64Value, 1_700_000_000_250)

        rules.markDead(token: deviceToken(8), since: now)
        let second = rules.respond(to: try request(token: deviceToken(8)), now: now)
        XCTAssertEqual(second.status, 410)
        XCTAssertEqual(rules.stats().count("apns", 410, "Unregistered"), 2)
    }

    func testProviderTokenChecks() throws {
        let rules = try rules()
        let credentials = try TestCredentials.get()
        let noAuth = try request(headers: [("apns-topic", TestCredentials.topic)])
        try assertReason(rules.respond(to: noAuth, now: now), 403, "MissingProviderToken")

        let otherKey = P256.Signing.PrivateKey()
        let badTokens = [
            try credentials.providerToken(issuedAt: now, key: otherKey),  // wrong signature
            try credentials.providerToken(issuedAt: now, keyID: "UNKNOWNKEY"),
            try credentials.providerToken(issuedAt: now, teamID: "OTHERTEAM1"),
            try credentials.providerToken(issuedAt: now, alg: "HS256"),
            "not.a.jwt",
        ]
        for token in badTokens {
            try assertReason(rules.respond(to: try request(providerToken: token), now: now), 403, "InvalidProviderToken")
        }
        let old = try credentials.providerToken(issuedAt: now.addingTimeInterval(-3601))
        try assertReason(rules.respond(to: try request(providerToken: old), now: now), 403, "ExpiredProviderToken")
    }

    func testVerifiedProviderTokenExpiresAfterAnHour() throws {
        let rules = try rules()
        let token = try TestCredentials.get().providerToken(issuedAt: now)
        XCTAssertEqual(rules.respond(to: try request(providerToken: token), now: now).status, 200)
        XCTAssertEqual(rules.respond(to: try request(providerToken: token), now: now.addingTimeInterval(3000)).status, 200)
        try assertReason(
            rules.respond(to: try request(providerToken: token), now: now.addingTimeInterval(3700)), 403,
            "ExpiredProviderToken")
    }

    func testTopicAndPushTypeChecks() throws {
        let rules = try rules()
        let jwt = try TestCredentials.get().providerToken(issuedAt: now)
        func headers(topic: String?, pushType: String?) -> [(String, String)] {
            var headers = [("authorization", "bearer \(jwt)")]
            if let topic { headers.append(("apns-topic", topic)) }
            if let pushType { headers.append(("apns-push-type", pushType)) }
            return headers
        }
        try assertReason(
            rules.respond(to: try request(headers: headers(topic: nil, pushType: "alert")), now: now), 400,
            "MissingTopic")
        try assertReason(
            rules.respond(to: try request(headers: headers(topic: "com.other.app", pushType: "alert")), now: now), 400,
            "TopicDisallowed")
        try assertReason(
            rules.respond(to: try request(headers: headers(topic: TestCredentials.topic, pushType: "fax")), now: now),
            400, "InvalidPushType")
        try assertReason(
            rules.respond(to: try request(headers: headers(topic: TestCredentials.topic, pushType: "voip")), now: now),
            400, "InvalidPushType")
        let voip = try request(headers: headers(topic: TestCredentials.topic + ".voip", pushType: "voip"))
        XCTAssertEqual(rules.respond(to: voip, now: now).status, 200)
        let noType = try request(headers: headers(topic: TestCredentials.topic, pushType: nil))
        XCTAssertEqual(rules.respond(to: noType, now: now).status, 200)
        // A key without topics may push to any bundle ID.
        let open = try self.rules(topics: [])
        XCTAssertEqual(
            open.respond(to: try request(headers: headers(topic: "com.any.app", pushType: "alert")), now: now).status,
            200)
    }

    func testHeaderValueChecks() throws {
        let rules = try rules()
        let cases: [([(String, String)], String)] = [
            ([("apns-priority", "7")], "BadPriority"),
            ([("apns-expiration", "tomorrow")], "BadExpirationDate"),
            ([("apns-id", "not-a-uuid")], "BadMessageId"),
            ([("apns-collapse-id", String(repeating: "c", count: 65))], "BadCollapseId"),
            ([("apns-topic", "com.example.app")], "DuplicateHeaders"),
        ]
        for (extra, reason) in cases {
            try assertReason(rules.respond(to: try request(extraHeaders: extra), now: now), 400, reason)
        }
        let jwt = try TestCredentials.get().providerToken(issuedAt: now)
        let background = try request(headers: [
            ("authorization", "bearer \(jwt)"), ("apns-topic", TestCredentials.topic),
            ("apns-push-type", "background"), ("apns-priority", "10"),
        ])
        try assertReason(rules.respond(to: background, now: now), 400, "BadPriority")
        let fine = try request(extraHeaders: [
            ("apns-expiration", "0"), ("apns-collapse-id", String(repeating: "c", count: 64)),
        ])
        XCTAssertEqual(rules.respond(to: fine, now: now).status, 200)
    }

    func testMDMPushIsTheMagicAlone() throws {
        let rules = try rules()
        let jwt = try TestCredentials.get().providerToken(issuedAt: now)
        let mdmHeaders = [
            ("authorization", "bearer \(jwt)"), ("apns-topic", "com.apple.mgmt.External.3b5f1a2e-9c4d-4e6f-8a7b-0c1d2e3f4a5b"),
            ("apns-push-type", "mdm"),
        ]
        let magic = Array(#"{"mdm":"5A1F2B3C-PUSHMAGIC"}"#.utf8)
        XCTAssertEqual(rules.respond(to: try request(headers: mdmHeaders, body: magic), now: now).status, 200)
        try assertReason(rules.respond(to: try request(headers: mdmHeaders, body: []), now: now), 400, "PayloadEmpty")
        try assertReason(
            rules.respond(to: try request(headers: mdmHeaders, body: Array(#"{"mdm":""}"#.utf8)), now: now), 400,
            "PayloadEmpty")
        try assertReason(
            rules.respond(to: try request(headers: mdmHeaders, body: Array(#"{"mdm":7}"#.utf8)), now: now), 400,
            "PayloadEmpty")
        try assertReason(
            rules.respond(to: try request(headers: mdmHeaders, body: Array(#"{"aps":{}}"#.utf8)), now: now), 400,
            "PayloadEmpty")
    }

    func testPayloadChecks() throws {
        let rules = try rules()
        try assertReason(rules.respond(to: try request(body: []), now: now), 400, "PayloadEmpty")
        let filler = String(repeating: "x", count: 4097 - #"{"aps":{"alert":""}}"#.utf8.count)
        let big = Array(#"{"aps":{"alert":"\#(filler)"}}"#.utf8)
        XCTAssertEqual(big.count, 4097)
        try assertReason(rules.respond(to: try request(body: big), now: now), 413, "PayloadTooLarge")
        try assertReason(rules.respond(to: try request(body: Array("{not json".utf8)), now: now), 400, "PayloadEmpty")
        try assertReason(rules.respond(to: try request(body: Array("{}".utf8)), now: now), 400, "PayloadEmpty")
        try assertReason(rules.respond(to: try request(body: Array("[1]".utf8)), now: now), 400, "PayloadEmpty")
        try assertReason(rules.respond(to: try request(body: Array(#"{"aps":"x"}"#.utf8)), now: now), 400, "PayloadEmpty")
        // Custom keys without `aps`: APNs documents no error for it and delivers it.
        XCTAssertEqual(rules.respond(to: try request(body: Array(#"{"alert":"x"}"#.utf8)), now: now).status, 200)

        let jwt = try TestCredentials.get().providerToken(issuedAt: now)
        let voipHeaders = [
            ("authorization", "bearer \(jwt)"), ("apns-topic", TestCredentials.topic + ".voip"),
            ("apns-push-type", "voip"),
        ]
        XCTAssertEqual(rules.respond(to: try request(headers: voipHeaders, body: big), now: now).status, 200)
        let voipFiller = String(repeating: "x", count: 5121 - #"{"aps":{"alert":""}}"#.utf8.count)
        let voipBig = Array(#"{"aps":{"alert":"\#(voipFiller)"}}"#.utf8)
        try assertReason(rules.respond(to: try request(headers: voipHeaders, body: voipBig), now: now), 413, "PayloadTooLarge")
    }

    func testMethodAndPath() throws {
        let rules = try rules()
        try assertReason(rules.respond(to: try request(method: "GET"), now: now), 405, "MethodNotAllowed")
        let other = SimulatorRequest(method: "POST", path: "/2/device/abc", headers: [], body: payload)
        let response = rules.respond(to: other, now: now)
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(try json(response)["reason"] as? String, "BadPath")
    }

    func testFastModeSkipsEveryCheck() throws {
        let rules = try rules(fastMode: true)
        let garbage = SimulatorRequest(method: "POST", path: "/3/device/zz", headers: [], body: [])
        let response = rules.respond(to: garbage, now: now)
        XCTAssertEqual(response.status, 200)
        XCTAssertNotNil(response.header("apns-id"))
        XCTAssertEqual(rules.stats().apnsAccepted, 1)
    }

    func testScenarioAnswers429WithRetryAfter() throws {
        var configuration = try TestCredentials.get().configuration()
        configuration.scenarios = [
            .init(provider: "apns", fault: .httpError(status: 429, retryAfterSeconds: 7), afterRequests: 1, count: 2)
        ]
        let rules = try SimulatorRules(configuration: configuration)
        let statuses = try (0..<5).map { _ in rules.respond(to: try request(), now: now) }
        XCTAssertEqual(statuses.map(\.status), [200, 429, 429, 200, 200])
        XCTAssertEqual(statuses[1].header("retry-after"), "7")
        XCTAssertEqual(try json(statuses[1])["reason"] as? String, "TooManyRequests")
        XCTAssertEqual(rules.stats().count("apns", 429, "TooManyRequests"), 2)
    }
}
