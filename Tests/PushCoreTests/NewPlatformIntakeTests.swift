import Foundation
import XCTest
@testable import PushCore

/// Browsers (a `PushSubscription` recipient) and Huawei phones (a Push Kit
/// token) at intake and in translation: what is accepted, the path and reason
/// of what is not, and the requests they become.
final class NewPlatformIntakeTests: XCTestCase {
    // A real P-256 point (RFC 8291 Appendix A's user agent key) and auth secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV"

    func decode(recipients: String, extra: String = #","alert":{"title":"Hi","body":"b"}"#) -> Result<PushNotification, IntakeError> {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":\#(recipients)\#(extra)}"#
        return PushNotification.decode(Array(json.utf8), policy: Examples.policy)
    }

    func issues(_ recipients: String) -> [String: String] {
        switch decode(recipients: recipients) {
        case .success: return [:]
        case .failure(let error): return Dictionary(error.issues.map { ($0.path, $0.reason) }, uniquingKeysWith: { a, _ in a })
        }
    }

    func subscription(endpoint: String = endpoint, p256dh: String = p256dh, auth: String = auth, extra: String = "") -> String {
        #"{"platform":"web","subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}\#(extra)}}"#
    }

    func testASubscriptionAndAHuaweiTokenDecodeAndRoundTrip() throws {
        let huawei = #"{"token":"IQAAAACy0kYjAAA","platform":"huawei"}"#
        let n = try decode(recipients: "[\(subscription(extra: #","expirationTime":null"#)),\(huawei),\(subscription())]").get()
        XCTAssertEqual(n.recipients, [
            Recipient(endpoint: Self.endpoint, keys: WebPushKeys(p256dh: Self.p256dh, auth: Self.auth)),
            Recipient(token: "IQAAAACy0kYjAAA", platform: .huawei),
        ], "the repeated subscription is dropped")
        // The same endpoint with its keys padded is still one subscription: one send, one ledger row.
        let padded = try decode(recipients: "[\(subscription()),\(subscription(p256dh: Self.p256dh + "=", auth: Self.auth + "=="))]").get()
        XCTAssertEqual(padded.recipients.count, 1)
        XCTAssertEqual(n.recipients.map(\.platform.provider), [.webpush, .hms])
        // What intake took is what the encoder writes back.
        let again = try PushNotification.decode(n.intakeJSON().encoded(), policy: Examples.policy).get()
        XCTAssertEqual(again.recipients, n.recipients)
    }

    func testEveryBadSubscriptionSaysWhereAndWhy() {
        let offCurveButWellFormed = "B" + String(repeating: "A", count: 86)
        let cases: [(String, String)] = [
            (#"{"token":"abc","platform":"web"}"#, "recipients[0].platform"),
            (#"{"platform":"web"}"#, "recipients[0].token"),
            (#"{"subscription":{}}"#, "recipients[0].platform"),
            (#"{"platform":"ios","subscription":{}}"#, "recipients[0].platform"),
            (#"{"platform":"web","subscription":"https://x"}"#, "recipients[0].subscription"),
            (subscription(endpoint: "http://push.example.net/x"), "recipients[0].subscription.endpoint"),
            (subscription(endpoint: "https://"), "recipients[0].subscription.endpoint"),
            (subscription(endpoint: "https://a b/c"), "recipients[0].subscription.endpoint"),
            (subscription(endpoint: "https://x/" + String(repeating: "a", count: 2100)), "recipients[0].subscription.endpoint"),
            (subscription(p256dh: String(Self.p256dh.dropLast())), "recipients[0].subscription.keys.p256dh"),
            (subscription(p256dh: "A" + Self.p256dh.dropFirst()), "recipients[0].subscription.keys.p256dh"),
            (subscription(p256dh: Self.p256dh.replacingOccurrences(of: "_", with: "/")), "recipients[0].subscription.keys.p256dh"),
            (subscription(p256dh: Self.p256dh + "=="), "recipients[0].subscription.keys.p256dh"),
            (subscription(auth: String(Self.auth.dropLast(2))), "recipients[0].subscription.keys.auth"),
            (subscription(auth: Self.auth + "="), "recipients[0].subscription.keys.auth"),
            (subscription(auth: ""), "recipients[0].subscription.keys.auth"),
            (subscription(extra: #","expirationTime":"tomorrow""#), "recipients[0].subscription.expirationTime"),
            (subscription(extra: #","options":{}"#), "recipients[0].subscription.options"),
            (#"{"platform":"web","subscription":{"endpoint":"\#(Self.endpoint)","keys":{"p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)","x":1}}}"#,
             "recipients[0].subscription.keys.x"),
            (#"{"platform":"web","subscription":{"endpoint":"\#(Self.endpoint)","keys":[]}}"#, "recipients[0].subscription.keys"),
            (#"{"platform":"web","subscription":{"endpoint":"\#(Self.endpoint)"}}"#, "recipients[0].subscription.keys"),
        ]
        for (recipient, path) in cases {
            let found = issues("[\(recipient)]")
            XCTAssertNotNil(found[path], "\(recipient.prefix(160)): no issue at \(path), got \(found)")
        }
        // Well-formed but no point on the curve: intake cannot tell (that takes OpenSSL); sealing refuses it.
        XCTAssertEqual(issues("[\(subscription(p256dh: offCurveButWellFormed))]"), [:])
        // Padding that completes the last quantum is accepted, as browsers may send it.
        XCTAssertEqual(issues("[\(subscription(p256dh: Self.p256dh + "=", auth: Self.auth + "=="))]"), [:])
        // A huge expirationTime is only a number: accepted and unused.
        XCTAssertEqual(issues("[\(subscription(extra: #","expirationTime":1e308"#))]"), [:])
    }

    func testTheWebPushRequestCarriesTheRFC8030Headers() throws {
        let keys = WebPushKeys(p256dh: Self.p256dh, auth: Self.auth)
        let created = Date(timeIntervalSince1970: 1_795_262_400)
        var n = PushNotification(id: UUID(), app: "a", createdAt: created, expiresAt: created.addingTimeInterval(3600),
                                 priority: .high, collapseKey: "score-update", recipients: [Recipient(endpoint: Self.endpoint, keys: keys)],
                                 alert: .init(title: "Goal", body: "1-0"))
        let request = try WebPushTranslator.request(for: n, recipient: n.recipients[0]).get()
        XCTAssertEqual(request.provider, .webpush)
        XCTAssertEqual(request.path, Self.endpoint)
        XCTAssertEqual(request.webKeys, keys)
        XCTAssertEqual(request.header("ttl"), "3600")
        XCTAssertEqual(request.header("urgency"), "high")
        XCTAssertEqual(request.header("topic"), "score-update")
        let payload = try JSONValue.parse(request.body)
        XCTAssertEqual(payload["title"]?.stringValue, "Goal")
        XCTAssertEqual(payload["body"]?.stringValue, "1-0")
        XCTAssertEqual(payload["tag"]?.stringValue, "score-update")

        // A collapse key that is no Topic becomes 32 stable base64url characters.
        n.collapseKey = "a key with spaces and more than thirty-two characters"
        let hashed = try WebPushTranslator.request(for: n, recipient: n.recipients[0]).get().header("topic")
        XCTAssertEqual(hashed?.count, 32)
        XCTAssertTrue(hashed.map { Base64URL.isAlphabet($0) } ?? false)
        XCTAssertEqual(hashed, WebPushTranslator.topic(for: n.collapseKey ?? ""))

        // TTL is total for any dates: already expired is 0, far future is capped at 28 days.
        XCTAssertEqual(WebPushTranslator.ttl(for: n, now: created.addingTimeInterval(7200)), 0)
        n.expiresAt = Date.distantFuture
        XCTAssertEqual(WebPushTranslator.ttl(for: n, now: nil), 28 * 86_400)
        n.priority = .low
        XCTAssertEqual(WebPushTranslator.urgency(for: n), "low")
    }

    func testAWebPayloadOverOneRecordIsRefusedAtIntake() {
        let big = String(repeating: "x", count: 4000)
        guard case .failure(let error) = decode(recipients: "[\(subscription())]", extra: #","alert":{"title":"t","body":"\#(big)"}"#) else {
            return XCTFail("a 4000-byte body fits no 4096-byte record")
        }
        XCTAssertTrue(error.issues.contains { $0.code == .payloadTooLarge && $0.reason.contains("3993") }, "\(error.issues)")
    }

    func testPushKitTranslationNeedsAnAppIDAndAWellFormedToken() throws {
        let n = try decode(recipients: #"[{"token":"IQAAAACy0kYjAAA","platform":"huawei"}]"#).get()
        let withApp = TranslationContext(apnsTopic: nil, fcmProjectID: nil, hmsAppID: "106950123")
        let request = try n.request(for: n.recipients[0], context: withApp).get()
        XCTAssertEqual(request.provider, .hms)
        XCTAssertTrue(request.path.contains("106950123"), request.path)
        let body = try JSONValue.parse(request.body)
        guard case .array(let tokens)? = body["message"]?["token"] else { return XCTFail("message.token is a list: \(body)") }
        XCTAssertEqual(tokens.map(\.stringValue), ["IQAAAACy0kYjAAA"])

        guard case .failure(let noApp) = n.request(for: n.recipients[0], context: TranslationContext(apnsTopic: nil, fcmProjectID: nil)) else {
            return XCTFail("no Push Kit app id, no request")
        }
        XCTAssertEqual(noApp.code, "MissingAppID")
        // Intake refuses such a token (EndpointAndTokenIntakeTests); translation still checks one that
        // reaches it another way, such as a registry row written before that rule.
        guard case .failure(let bad) = n.request(for: Recipient(token: "bad token!", platform: .huawei), context: withApp) else {
            return XCTFail("a token with a space")
        }
        XCTAssertEqual(bad.code, "InvalidToken")
        XCTAssertTrue(bad.tokenIsInvalid)
    }

    func testRegistrySubscriptionsAreReadByTheSameRules() {
        let good = JSONValue.object([("endpoint", .string(Self.endpoint)),
                                     ("keys", .object([("p256dh", .string(Self.p256dh)), ("auth", .string(Self.auth))]))])
        XCTAssertEqual(try Recipient.webSubscription(good).get(), Recipient(endpoint: Self.endpoint, keys: WebPushKeys(p256dh: Self.p256dh, auth: Self.auth)))
        for bad: JSONValue in [.string("x"), .null, .object([]), .object([("endpoint", .string(Self.endpoint))]),
                               .object([("endpoint", .int(1)), ("keys", .object([]))])] {
            guard case .failure(let error) = Recipient.webSubscription(bad) else { return XCTFail("\(bad) is no subscription") }
            XCTAssertFalse(error.issues.isEmpty)
            XCTAssertTrue(error.issues.allSatisfy { $0.path.hasPrefix("subscription") }, "\(error.issues)")
        }
    }
}
