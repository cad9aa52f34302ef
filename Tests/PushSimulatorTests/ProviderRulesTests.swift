import Crypto
import Foundation
import XCTest

@testable import PushSimulator

/// Issue 3's simulator half: the rules the translator follows, enforced by the simulator.
final class ProviderRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let payload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
    /// One provider token for the whole test, as a real sender reuses it (a new one
    /// per request would trip the TooManyProviderTokenUpdates rule).
    lazy var sharedJWT: String = (try? TestCredentials.get().providerToken(issuedAt: now)) ?? ""

    private func rules(_ edit: (inout SimulatorConfiguration) -> Void = { _ in }) throws -> SimulatorRules {
        var configuration = try TestCredentials.get().configuration()
        edit(&configuration)
        return try SimulatorRules(configuration: configuration)
    }

    private func request(
        token: String = deviceToken(), topic: String = TestCredentials.topic, pushType: String? = "alert",
        priority: String? = "10", extra: [(String, String)] = [], body: [UInt8]? = nil, jwt: String? = nil,
        certificate: SimulatorClientCertificate? = nil, withToken: Bool = true
    ) throws -> SimulatorRequest {
        var headers: [(name: String, value: String)] = [("apns-topic", topic)]
        if withToken {
            headers.append(("authorization", "bearer \(jwt ?? sharedJWT)"))
        }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", priority)) }
        headers += extra.map { ($0.0, $0.1) }
        return SimulatorRequest(
            method: "POST", path: "/3/device/\(token)", headers: headers, body: body ?? payload,
            clientCertificate: certificate)
    }

    private func reason(_ response: SimulatorResponse) -> String {
        (try? json(response)["reason"] as? String) ?? "OK"
    }

    func testPushTypeNeedsItsTopicSuffix() throws {
        let rules = try rules()
        let suffixes = [
            "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider",
            "location": ".location-query", "liveactivity": ".push-type.liveactivity", "pushtotalk": ".voip-ptt",
            "widgets": ".push-type.widgets",
        ]
        for (pushType, suffix) in suffixes {
            let good = rules.respond(to: try request(topic: TestCredentials.topic + suffix, pushType: pushType), now: now)
            XCTAssertEqual(good.status, 200, "\(pushType): \(good.bodyText)")
            let bare = rules.respond(to: try request(pushType: pushType), now: now)
            XCTAssertEqual(bare.status, 400, pushType)
            XCTAssertEqual(reason(bare), "InvalidPushType", pushType)
            // Another type's suffix is not enough.
            let wrong = rules.respond(to: try request(topic: TestCredentials.topic + ".other", pushType: pushType), now: now)
            XCTAssertEqual(reason(wrong), "InvalidPushType", pushType)
        }
    }

    func testAlertAndBackgroundGoToTheBareBundleID() throws {
        let rules = try rules { $0.apnsKeys[0].topics = [] }  // even a key open to any topic
        for pushType in ["alert", "background"] {
            let priority = pushType == "background" ? "5" : "10"
            XCTAssertEqual(rules.respond(to: try request(pushType: pushType, priority: priority), now: now).status, 200)
            for suffix in [".voip", ".complication", ".push-type.liveactivity"] {
                let response = rules.respond(
                    to: try request(topic: TestCredentials.topic + suffix, pushType: pushType, priority: priority), now: now)
                XCTAssertEqual(response.status, 400, "\(pushType) \(suffix)")
                XCTAssertEqual(reason(response), "InvalidPushType")
            }
        }
    }

    func testBackgroundNeedsPriorityFive() throws {
        let rules = try rules()
        XCTAssertEqual(rules.respond(to: try request(pushType: "background", priority: "5"), now: now).status, 200)
        for priority in ["10", "1", nil] {
            let response = rules.respond(to: try request(pushType: "background", priority: priority), now: now)
            XCTAssertEqual(response.status, 400, priority ?? "absent (means 10)")
            XCTAssertEqual(reason(response), "BadPriority")
        }
    }

    func testPriorityValues() throws {
        let rules = try rules()
        for priority in ["10", "5", "1", nil] {
            XCTAssertEqual(rules.respond(to: try request(priority: priority), now: now).status, 200, priority ?? "absent")
        }
        for priority in ["0", "2", "11", "high", ""] {
            XCTAssertEqual(reason(rules.respond(to: try request(priority: priority), now: now)), "BadPriority", priority)
        }
    }

    func testCollapseIDLimitIsInBytes() throws {
        let rules = try rules()
        let fits = String(repeating: "é", count: 32)  // 64 bytes
        XCTAssertEqual(rules.respond(to: try request(extra: [("apns-collapse-id", fits)]), now: now).status, 200)
        let over = String(repeating: "é", count: 33)  // 33 characters, 66 bytes
        let response = rules.respond(to: try request(extra: [("apns-collapse-id", over)]), now: now)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(reason(response), "BadCollapseId")
    }

    func testPayloadSizeLimitsAtTheBoundary() throws {
        let rules = try rules()
        func body(_ size: Int) -> [UInt8] {
            let filler = String(repeating: "x", count: size - #"{"aps":{"alert":""}}"#.utf8.count)
            return Array(#"{"aps":{"alert":"\#(filler)"}}"#.utf8)
        }
        XCTAssertEqual(rules.respond(to: try request(body: body(4096)), now: now).status, 200)
        XCTAssertEqual(reason(rules.respond(to: try request(body: body(4097)), now: now)), "PayloadTooLarge")
        let voipTopic = TestCredentials.topic + ".voip"
        XCTAssertEqual(rules.respond(to: try request(topic: voipTopic, pushType: "voip", body: body(5120)), now: now).status, 200)
        let tooBig = rules.respond(to: try request(topic: voipTopic, pushType: "voip", body: body(5121)), now: now)
        XCTAssertEqual(tooBig.status, 413)
        XCTAssertEqual(reason(tooBig), "PayloadTooLarge")
    }

    func testSandboxTokenOnProductionIsBadDeviceToken() throws {
        let sandbox = deviceToken(0x51)
        let production = deviceToken(0x52)
        let rules = try rules {
            $0.apnsEnvironment = .production
            $0.tokenEnvironments = [sandbox.uppercased(): .sandbox, production: .production]
        }
        let rejected = rules.respond(to: try request(token: sandbox), now: now)
        XCTAssertEqual(rejected.status, 400)
        XCTAssertEqual(reason(rejected), "BadDeviceToken")
        XCTAssertEqual(rules.respond(to: try request(token: production), now: now).status, 200)
        XCTAssertEqual(rules.respond(to: try request(token: deviceToken(0x53)), now: now).status, 200)  // unknown: accepted
        rules.state.setEnvironment(.sandbox, token: deviceToken(0x53))
        XCTAssertEqual(reason(rules.respond(to: try request(token: deviceToken(0x53)), now: now)), "BadDeviceToken")

        // A simulator that plays no particular environment accepts both.
        let either = try self.rules { $0.tokenEnvironments = [sandbox: .sandbox] }
        XCTAssertEqual(either.respond(to: try request(token: sandbox), now: now).status, 200)
    }

    func testTooManyProviderTokenUpdates() throws {
        let rules = try rules { $0.apnsTokenUpdateAllowance = 2 }
        let credentials = try TestCredentials.get()
        var accepted: [String] = []
        for offset in 0..<3 {  // the first token and two updates within 20 minutes
            let jwt = try credentials.providerToken(issuedAt: now.addingTimeInterval(Double(offset * 60)))
            XCTAssertEqual(rules.respond(to: try request(jwt: jwt), now: now.addingTimeInterval(Double(offset * 60))).status, 200)
            accepted.append(jwt)
        }
        let fourth = try credentials.providerToken(issuedAt: now.addingTimeInterval(200))
        let response = rules.respond(to: try request(jwt: fourth), now: now.addingTimeInterval(200))
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(reason(response), "TooManyProviderTokenUpdates")
        // Tokens already in use keep working; the new one works once the window has passed.
        XCTAssertEqual(rules.respond(to: try request(jwt: accepted[2]), now: now.addingTimeInterval(200)).status, 200)
        let later = now.addingTimeInterval(20 * 60 + 121)
        let fresh = try credentials.providerToken(issuedAt: later)
        XCTAssertEqual(rules.respond(to: try request(jwt: fresh), now: later).status, 200)
        XCTAssertEqual(rules.stats().count("apns", 429, "TooManyProviderTokenUpdates"), 1)

        // nil disables the rule.
        let unlimited = try self.rules { $0.apnsTokenUpdateAllowance = nil }
        for offset in 0..<15 {
            let jwt = try credentials.providerToken(issuedAt: now.addingTimeInterval(Double(offset)))
            XCTAssertEqual(unlimited.respond(to: try request(jwt: jwt), now: now).status, 200)
        }
    }

    func testExpiredProviderTokenDoesNotCountAsAnUpdate() throws {
        let rules = try rules { $0.apnsTokenUpdateAllowance = 0 }
        let credentials = try TestCredentials.get()
        let expired = try credentials.providerToken(issuedAt: now.addingTimeInterval(-3700))
        XCTAssertEqual(reason(rules.respond(to: try request(jwt: expired), now: now)), "ExpiredProviderToken")
        XCTAssertEqual(rules.respond(to: try request(jwt: try credentials.providerToken(issuedAt: now)), now: now).status, 200)
    }

    func testClientCertificateAuthentication() throws {
        let rules = try rules { $0.apnsEnvironment = .production }
        func send(_ certificate: SimulatorClientCertificate?, topic: String = TestCredentials.topic) throws -> SimulatorResponse {
            rules.respond(to: try request(topic: topic, certificate: certificate, withToken: false), now: now)
        }
        let universal = SimulatorClientCertificate(commonName: "Apple Push Services: \(TestCredentials.topic)", isTrusted: true)
        XCTAssertEqual(try send(universal).status, 200)
        XCTAssertEqual(reason(try send(universal, topic: TestCredentials.topic + ".voip")), "InvalidPushType")
        let production = SimulatorClientCertificate(
            commonName: "Apple Production IOS Push Services: \(TestCredentials.topic)", isTrusted: true)
        XCTAssertEqual(try send(production).status, 200)
        let untrusted = SimulatorClientCertificate(commonName: universal.commonName, isTrusted: false)
        XCTAssertEqual(reason(try send(untrusted)), "BadCertificate")
        XCTAssertEqual(try send(untrusted).status, 403)
        let development = SimulatorClientCertificate(
            commonName: "Apple Development IOS Push Services: \(TestCredentials.topic)", isTrusted: true)
        XCTAssertEqual(reason(try send(development)), "BadCertificateEnvironment")
        let otherApp = SimulatorClientCertificate(commonName: "Apple Push Services: com.other.app", isTrusted: true)
        XCTAssertEqual(reason(try send(otherApp)), "TopicDisallowed")
        XCTAssertEqual(reason(try send(nil)), "MissingProviderToken")
    }
}
