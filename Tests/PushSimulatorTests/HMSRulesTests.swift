import Foundation
import XCTest

@testable import PushSimulator

final class HMSRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let appID = "104000001"
    let secret = "s3cr+t/=="

    func makeRules(fastMode: Bool = false, lifetime: Int = 3600) throws -> SimulatorRules {
        try SimulatorRules(configuration: SimulatorConfiguration(
            fastMode: fastMode, hmsApps: [SimulatorHMSApp(appID: appID, clientSecret: secret, tokenLifetimeSeconds: lifetime)]))
    }

    func form(_ pairs: [(String, String)]) -> [UInt8] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let text = pairs.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return Array(text.utf8)
    }

    func token(_ rules: SimulatorRules, at time: Date? = nil) throws -> String {
        let response = rules.respond(
            to: SimulatorRequest(
                method: "POST", path: "/oauth2/v3/token",
                body: form([("grant_type", "client_credentials"), ("client_id", appID), ("client_secret", secret)])),
            now: time ?? now)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        XCTAssertEqual(body["token_type"] as? String, "Bearer")
        XCTAssertEqual(body["expires_in"] as? Int, 3600)
        return try XCTUnwrap(body["access_token"] as? String)
    }

    func send(_ rules: SimulatorRules, _ body: String, token: String?, appID: String? = nil, at time: Date? = nil)
        -> (SimulatorResponse, [String: Any])
    {
        let response = rules.respond(
            to: SimulatorRequest(
                method: "POST", path: "/v1/\(appID ?? self.appID)/messages:send",
                headers: token.map { [("authorization", "Bearer \($0)")] } ?? [], body: Array(body.utf8)),
            now: time ?? now)
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response, json)
    }

    func message(tokens: [String], extra: String = "") -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"validate_only":false,"message":{"notification":{"title":"t","body":"b"},"android":{"urgency":"HIGH","ttl":"86400s","collapse_key":3,"notification":{"click_action":{"type":3}}}\#(extra),"token":[\#(list)]}}"#
    }

    func testDispatchKeepsFCMPathsApart() {
        XCTAssertEqual(SimulatorRules.provider(forPath: "/v1/104000001/messages:send"), "hms")
        XCTAssertEqual(SimulatorRules.provider(forPath: "/v1/projects/p/messages:send"), "fcm")
        XCTAssertEqual(SimulatorRules.provider(forPath: "/v1/a/b/messages:send"), "other")
        XCTAssertEqual(SimulatorRules.provider(forPath: "/v1//messages:send"), "other")
        XCTAssertEqual(SimulatorRules.provider(forPath: "/oauth2/v3/token"), "hms-oauth")
        XCTAssertEqual(SimulatorRules.provider(forPath: "/token"), "oauth")
    }

    func testTokenEndpointChecksCredentials() throws {
        let rules = try makeRules()
        _ = try token(rules)
        for (pairs, sub) in [
            ([("grant_type", "client_credentials"), ("client_id", appID), ("client_secret", "nope")], 12304),
            ([("grant_type", "client_credentials"), ("client_id", "999"), ("client_secret", secret)], 20003),
            ([("grant_type", "password"), ("client_id", appID), ("client_secret", secret)], 20182),
        ] {
            let response = rules.respond(to: SimulatorRequest(method: "POST", path: "/oauth2/v3/token", body: form(pairs)), now: now)
            XCTAssertEqual(response.status, 400)
            let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            XCTAssertEqual(body["error"] as? Int, 1101)
            XCTAssertEqual(body["sub_error"] as? Int, sub)
        }
        XCTAssertEqual(rules.stats().tokensIssued, 1)
    }

    func testSuccess() throws {
        let rules = try makeRules()
        let (response, body) = send(rules, message(tokens: ["tokA"]), token: try token(rules))
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(body["code"] as? String, "80000000")
        XCTAssertEqual(body["msg"] as? String, "Success")
        XCTAssertFalse((body["requestId"] as? String ?? "").isEmpty)
        XCTAssertEqual(rules.stats().count("hms", 200, "80000000"), 1)
    }

    func testAccessTokenRules() throws {
        let rules = try makeRules()
        let access = try token(rules)
        XCTAssertEqual(send(rules, message(tokens: ["a"]), token: nil).1["code"] as? String, "80200001")
        XCTAssertEqual(send(rules, message(tokens: ["a"]), token: "forged").0.status, 401)
        XCTAssertEqual(send(rules, message(tokens: ["a"]), token: access, appID: "555").1["code"] as? String, "80200001")
        let (expired, body) = send(rules, message(tokens: ["a"]), token: access, at: now.addingTimeInterval(3601))
        XCTAssertEqual(expired.status, 401)
        XCTAssertEqual(body["code"] as? String, "80200003")
    }

    func testIllegalTokens() throws {
        let rules = try makeRules()
        let access = try token(rules)
        let (all, allBody) = send(rules, message(tokens: ["dead-1"]), token: access)
        XCTAssertEqual(all.status, 200)
        XCTAssertEqual(allBody["code"] as? String, "80300007")
        let (_, partial) = send(rules, message(tokens: ["ok-1", "invalid-2", "ok-3"]), token: access)
        XCTAssertEqual(partial["code"] as? String, "80100000")
        let msg = try XCTUnwrap(partial["msg"] as? String)
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(msg.utf8)) as? [String: Any])
        XCTAssertEqual(result["success"] as? Int, 2)
        XCTAssertEqual(result["failure"] as? Int, 1)
        XCTAssertEqual(result["illegal_tokens"] as? [String], ["invalid-2"])
        rules.markDead(token: "gone-token", since: now)
        XCTAssertEqual(send(rules, message(tokens: ["gone-token"]), token: access).1["code"] as? String, "80300007")
    }

    func testMessageStructureRules() throws {
        let rules = try makeRules()
        let access = try token(rules)
        func code(_ body: String) -> String? { send(rules, body, token: access).1["code"] as? String }
        XCTAssertEqual(code("not json"), "80100003")
        XCTAssertEqual(code(#"{"message":{"token":"a"}}"#), "80100003")
        XCTAssertEqual(code(#"{"message":{"token":[]}}"#), "80300010")
        let many = (0...1000).map { "\"t\($0)\"" }.joined(separator: ",")
        XCTAssertEqual(code(#"{"message":{"token":[\#(many)]}}"#), "80300010")
        XCTAssertEqual(code(#"{"message":{"data":{"k":"v"},"token":["a"]}}"#), "80100003")
        XCTAssertEqual(code(#"{"message":{"android":{"collapse_key":101},"token":["a"]}}"#), "80100013")
        XCTAssertEqual(code(#"{"message":{"android":{"ttl":"1 day"},"token":["a"]}}"#), "80100001")
        XCTAssertEqual(code(#"{"message":{"android":{"urgency":"LOW"},"token":["a"]}}"#), "80100001")
        XCTAssertEqual(code(#"{"message":{"android":{"notification":{"title":"x"}},"token":["a"]}}"#), "80100003")
        XCTAssertEqual(code(#"{"validate_only":"no","message":{"token":["a"]}}"#), "80100001")
        XCTAssertEqual(code(#"{"message":{"data":"{}","android":{"ttl":"1.5s","collapse_key":-1},"token":["a"]}}"#), "80000000")
    }

    /// Push Kit's reference makes a notification message's title and body
    /// mandatory (in android.notification or message.notification): an image
    /// alone, or a title alone, is no notification it shows.
    func testANotificationMessageNeedsATitleAndABody() throws {
        let rules = try makeRules()
        let access = try token(rules)
        func code(_ message: String) -> String? {
            send(rules, #"{"message":{\#(message),"token":["a"]}}"#, token: access).1["code"] as? String
        }
        let click = #""android":{"notification":{"click_action":{"type":3}}}"#
        XCTAssertEqual(code(#""data":"{}","notification":{"image":"https://x.example/i.png"},\#(click)"#), "80100003")
        XCTAssertEqual(code(#""notification":{"image":"https://x.example/i.png"}"#), "80100003")
        XCTAssertEqual(code(#""notification":{"title":"t"},\#(click)"#), "80100003")
        XCTAssertEqual(code(#""notification":{"body":"b","title":""},\#(click)"#), "80100003")
        XCTAssertEqual(code(#""notification":{"title":"t","body":"b","image":"https://x.example/i.png"},\#(click)"#), "80000000")
        // Android's own title and body count, and so does a mix of the two places.
        XCTAssertEqual(code(#""android":{"notification":{"title":"t","body":"b","click_action":{"type":3}}}"#), "80000000")
        XCTAssertEqual(code(#""notification":{"body":"b"},"android":{"notification":{"title":"t","click_action":{"type":3}}}"#), "80000000")
        // A data message has neither block.
        XCTAssertEqual(code(#""data":"{\"k\":\"v\"}","android":{"urgency":"NORMAL"}"#), "80000000")
    }

    func testSizeLimitExcludesTokens() throws {
        let rules = try makeRules()
        let access = try token(rules)
        let big = String(repeating: "x", count: 4100)
        XCTAssertEqual(send(rules, #"{"message":{"data":"\#(big)","token":["a"]}}"#, token: access).1["code"] as? String, "80300008")
        let longToken = String(repeating: "T", count: 5000)
        XCTAssertEqual(send(rules, #"{"message":{"data":"x","token":["\#(longToken)"]}}"#, token: access).1["code"] as? String, "80000000")
    }

    func testFaultTokens() throws {
        let rules = try makeRules()
        let access = try token(rules)
        let (flow, flowBody) = send(rules, message(tokens: ["flow-1"]), token: access)
        XCTAssertEqual(flow.status, 503)
        XCTAssertEqual(flow.header("retry-after"), "1")
        XCTAssertNil(flowBody["code"])
        let (innerError, innerBody) = send(rules, message(tokens: ["internal-1"]), token: access)
        XCTAssertEqual(innerError.status, 500)
        XCTAssertEqual(innerBody["code"] as? String, "81000001")
    }

    func testFastModeAnswersSuccess() throws {
        let rules = try makeRules(fastMode: true)
        let (response, body) = send(rules, "anything", token: nil)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(body["code"] as? String, "80000000")
    }

    func testConfigurationDecodesHMSApps() throws {
        let json = #"{"hmsApps":[{"appId":"104000001","clientSecret":"s"},{"appId":"2","clientSecret":"t","tokenLifetimeSeconds":5}]}"#
        let configuration = try JSONDecoder().decode(SimulatorConfiguration.self, from: Data(json.utf8))
        XCTAssertEqual(configuration.hmsApps, [
            SimulatorHMSApp(appID: "104000001", clientSecret: "s"),
            SimulatorHMSApp(appID: "2", clientSecret: "t", tokenLifetimeSeconds: 5),
        ])
        XCTAssertEqual(try JSONDecoder().decode(SimulatorConfiguration.self, from: Data("{}".utf8)).hmsApps, [])
    }
}
