import Foundation
import XCTest
@testable import PushCore

/// What each provider is told for the same notification: how long to keep it
/// (one lifetime rule for all four), and what a notification without an
/// alert becomes (a data message everywhere, whatever its image).
final class ProviderMappingTests: XCTestCase {
    static let createdAt = "2026-11-21T12:00:00Z"
    /// `createdAt` in UNIX seconds.
    static let created: Int64 = 1_795_262_400
    static let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop", hmsAppID: "104937261")
    static let huawei = #"{"token":"\#(SchemaCorpus.huaweiToken)","platform":"huawei"}"#
    static let web = SchemaCorpus.web()

    func decode(_ members: String, recipients: String) throws -> PushNotification {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"com.example.shop","created_at":"\#(Self.createdAt)","recipients":\#(recipients)\#(members)}"#
        return try PushNotification.decode(Array(json.utf8), policy: Examples.policy).get()
    }

    /// The requests for every recipient and FCM target, by platform (or `topic`).
    func requests(_ members: String) throws -> [String: ProviderRequest] {
        let recipients = "[" + [
            #"{"token":"\#(SchemaCorpus.iosToken)","platform":"ios"}"#,
            #"{"token":"\#(SchemaCorpus.androidToken)","platform":"android"}"#, Self.web, Self.huawei, #"{"topic":"news"}"#,
        ].joined(separator: ",") + "]"
        let n = try decode(members, recipients: recipients)
        var out: [String: ProviderRequest] = [:]
        for recipient in n.recipients { out[recipient.platform.rawValue] = try n.request(for: recipient, context: Self.context).get() }
        for target in n.fcmTargets { out["topic"] = try n.request(for: target, context: Self.context).get() }
        XCTAssertEqual(out.keys.sorted(), ["android", "huawei", "ios", "topic", "web"])
        return out
    }

    /// Each provider's own words for how long to keep it.
    struct Lifetimes: Equatable, CustomStringConvertible {
        var apnsExpiration: String?
        var fcmAndroidTTL: String?
        var fcmTopicAndroidTTL: String?
        var fcmTopicWebpushTTL: String?
        var fcmTopicAPNsExpiration: String?
        var webPushTTL: String?
        var pushKitTTL: String?
        var description: String {
            "apns-expiration \(apnsExpiration ?? "-"), FCM android.ttl \(fcmAndroidTTL ?? "-"), FCM topic android.ttl "
                + "\(fcmTopicAndroidTTL ?? "-") webpush TTL \(fcmTopicWebpushTTL ?? "-") apns-expiration \(fcmTopicAPNsExpiration ?? "-"), "
                + "Web Push TTL \(webPushTTL ?? "-"), Push Kit android.ttl \(pushKitTTL ?? "-")"
        }
    }

    func lifetimes(_ members: String) throws -> Lifetimes {
        let r = try requests(members)
        let fcm = try JSONValue.parse(r["android"]?.body ?? [])["message"]
        let topic = try JSONValue.parse(r["topic"]?.body ?? [])["message"]
        let hms = try JSONValue.parse(r["huawei"]?.body ?? [])["message"]
        return Lifetimes(
            apnsExpiration: r["ios"]?.header("apns-expiration"),
            fcmAndroidTTL: fcm?["android"]?["ttl"]?.stringValue,
            fcmTopicAndroidTTL: topic?["android"]?["ttl"]?.stringValue,
            fcmTopicWebpushTTL: topic?["webpush"]?["headers"]?["TTL"]?.stringValue,
            fcmTopicAPNsExpiration: topic?["apns"]?["headers"]?["apns-expiration"]?.stringValue,
            webPushTTL: r["web"]?.header("ttl"),
            pushKitTTL: hms?["android"]?["ttl"]?.stringValue)
    }

    /// Without `ttl_seconds` or `expires_at` every provider is told 28 days
    /// from `created_at` (Push Kit its longest, 15 days), never left to its
    /// own default (Push Kit's is one day).
    func testWithoutAnExpiryEveryProviderKeepsItTwentyEightDays() throws {
        let days28: Int64 = 28 * 86_400
        XCTAssertEqual(try lifetimes(#","alert":{"title":"t","body":"b"}"#), Lifetimes(
            apnsExpiration: "\(Self.created + days28)", fcmAndroidTTL: "\(days28)s", fcmTopicAndroidTTL: "\(days28)s",
            fcmTopicWebpushTTL: "\(days28)", fcmTopicAPNsExpiration: "\(Self.created + days28)", webPushTTL: "\(days28)",
            pushKitTTL: "\(15 * 86_400)s"))
    }

    /// `ttl_seconds: 0` is now or never everywhere: APNs 0, FCM 0s (and a
    /// web app's TTL 0 on a topic), Web Push 0; Push Kit documents no zero
    /// TTL, so it gets its shortest cache, one second.
    func testTTLZeroIsNowOrNeverForEveryProvider() throws {
        XCTAssertEqual(try lifetimes(#","ttl_seconds":0,"alert":{"title":"t","body":"b"}"#), Lifetimes(
            apnsExpiration: "0", fcmAndroidTTL: "0s", fcmTopicAndroidTTL: "0s", fcmTopicWebpushTTL: "0",
            fcmTopicAPNsExpiration: "0", webPushTTL: "0", pushKitTTL: "1s"))
    }

    func testAGivenTTLReachesEveryProvider() throws {
        XCTAssertEqual(try lifetimes(#","ttl_seconds":3600,"alert":{"title":"t","body":"b"}"#), Lifetimes(
            apnsExpiration: "\(Self.created + 3600)", fcmAndroidTTL: "3600s", fcmTopicAndroidTTL: "3600s",
            fcmTopicWebpushTTL: "3600", fcmTopicAPNsExpiration: "\(Self.created + 3600)", webPushTTL: "3600",
            pushKitTTL: "3600s"))
        // Longer than Push Kit keeps anything: its 15 days; the others keep the 20 days asked for.
        let days20: Int64 = 20 * 86_400
        let long = try lifetimes(#","ttl_seconds":\#(days20),"alert":{"title":"t","body":"b"}"#)
        XCTAssertEqual(long.pushKitTTL, "\(15 * 86_400)s")
        XCTAssertEqual(long.webPushTTL, "\(days20)")
        XCTAssertEqual(long.fcmAndroidTTL, "\(days20)s")
        XCTAssertEqual(long.apnsExpiration, "\(Self.created + days20)")
    }

    /// Push Kit: data without an alert is a data message (`message.data`, no
    /// `notification` and no `android.notification`) even with an image,
    /// which shows only beside a title and a body, as on FCM.
    func testPushKitDataWithAnImageAndNoAlertIsADataMessage() throws {
        let n = try decode(#","image_url":"https://cdn.example.com/a.png","data":{"sync":"inbox"}"#, recipients: "[\(Self.huawei)]")
        let body = try JSONValue.parse(try n.request(for: n.recipients[0], context: Self.context).get().body)
        let message = try XCTUnwrap(body["message"])
        XCTAssertEqual(message["data"]?.stringValue, #"{"sync":"inbox"}"#)
        XCTAssertNil(message["notification"], "\(message)")
        XCTAssertNil(message["android"]?["notification"], "\(message)")
        // FCM does the same with the same notification.
        let fcm = try decode(#","image_url":"https://cdn.example.com/a.png","data":{"sync":"inbox"}"#,
                             recipients: #"[{"token":"\#(SchemaCorpus.androidToken)","platform":"android"}]"#)
        let fcmBody = try JSONValue.parse(try fcm.request(for: fcm.recipients[0], context: Self.context).get().body)
        XCTAssertNil(fcmBody["message"]?["notification"])

        // With a title and a body the image is shown beside them.
        let shown = try decode(#","image_url":"https://cdn.example.com/a.png","alert":{"title":"t","body":"b"}"#, recipients: "[\(Self.huawei)]")
        let shownBody = try JSONValue.parse(try shown.request(for: shown.recipients[0], context: Self.context).get().body)
        XCTAssertEqual(shownBody["message"]?["notification"]?["image"]?.stringValue, "https://cdn.example.com/a.png")
        XCTAssertEqual(shownBody["message"]?["notification"]?["title"]?.stringValue, "t")
    }

    /// Push Kit shows a notification only with both a title and a body: with
    /// one of them the delivery is rejected before it is sent, named.
    func testPushKitRefusesAnAlertWithOnlyATitleOrOnlyABody() throws {
        for alert in [#"{"title":"t"}"#, #"{"body":"b"}"#, #"{"title":"t","body":""}"#] {
            let n = try decode(#","alert":\#(alert)"#, recipients: "[\(Self.huawei)]")
            guard case .failure(let error) = n.request(for: n.recipients[0], context: Self.context) else {
                XCTFail("\(alert) was sent to Push Kit")
                continue
            }
            XCTAssertEqual(error.code, "IncompleteAlert", alert)
            XCTAssertFalse(error.tokenIsInvalid)
        }
    }

    /// A data-only notification gives the service worker its id and data and
    /// no text: no `"title": ""` for it to show.
    func testADataOnlyWebPayloadCarriesNoText() throws {
        for members in [#","data":{"sync":"inbox"}"#, #","alert":{"title":"","body":""},"data":{"sync":"inbox"}"#] {
            let n = try decode(members, recipients: "[\(Self.web)]")
            let request = try n.request(for: n.recipients[0], context: Self.context).get()
            let payload = try JSONValue.parse(request.body)
            XCTAssertEqual(payload.objectMembers?.map(\.key), ["id", "data"], String(decoding: request.body, as: UTF8.self))
            XCTAssertEqual(payload["data"]?["sync"]?.stringValue, "inbox")
        }
        // A body without a title keeps the body and has no title.
        let n = try decode(#","alert":{"body":"b"}"#, recipients: "[\(Self.web)]")
        let payload = try JSONValue.parse(try n.request(for: n.recipients[0], context: Self.context).get().body)
        XCTAssertNil(payload["title"])
        XCTAssertEqual(payload["body"]?.stringValue, "b")
    }
}
