import Foundation
import XCTest
@testable import PushCore

/// Apple's rules from "Sending notification requests to APNs" and
/// "Generating a remote notification", one test per rule, exact strings.
final class APNsRulesTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.app", fcmProjectID: "p")
    let token = String(repeating: "ab", count: 32)
    let created = Date(timeIntervalSince1970: 1_795_262_400)

    func notification(_ configure: (inout PushNotification) -> Void = { _ in }) -> PushNotification {
        var n = PushNotification(id: UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10")!, app: "a", createdAt: created,
                                 recipients: [Recipient(token: token, platform: .ios)], alert: .init(body: "hi"))
        configure(&n)
        return n
    }

    func request(_ n: PushNotification) throws -> ProviderRequest {
        try n.request(for: n.recipients[0], context: context).get()
    }

    func body(_ n: PushNotification) throws -> String { String(decoding: try request(n).body, as: UTF8.self) }

    func testEveryPushTypeGetsTheTopicAppleRequires() throws {
        let expected: [APNsPushType: String] = [
            .alert: "com.example.app", .background: "com.example.app", .mdm: "com.example.app",
            .location: "com.example.app.location-query", .voip: "com.example.app.voip",
            .complication: "com.example.app.complication", .fileprovider: "com.example.app.pushkit.fileprovider",
            .liveactivity: "com.example.app.push-type.liveactivity", .pushtotalk: "com.example.app.voip-ptt",
            .widgets: "com.example.app.push-type.widgets",
        ]
        XCTAssertEqual(Set(expected.keys), Set(APNsPushType.allCases))
        for (type, topic) in expected {
            let n = notification { $0.apns.pushType = type; if type == .background { $0.alert = nil; $0.contentAvailable = true } }
            let r = try request(n)
            XCTAssertEqual(r.header("apns-push-type"), type.rawValue)
            XCTAssertEqual(r.header("apns-topic"), topic, type.rawValue)
        }
        // A topic that already carries the suffix is not suffixed twice.
        let voip = notification { $0.apns.pushType = .voip }
        XCTAssertEqual(try voip.request(for: voip.recipients[0], context: .init(apnsTopic: "com.example.app.voip", fcmProjectID: nil)).get()
            .header("apns-topic"), "com.example.app.voip")
    }

    func testMDMUsesTheMDMTopicAsGivenAndOnlyThePushMagic() throws {
        let n = notification {
            $0.alert = nil
            $0.apns = APNsOverrides(pushType: .mdm, topic: "com.apple.mgmt.External.abc")
            $0.data = [("mdm", .string("MAGIC"))]
        }
        let r = try request(n)
        XCTAssertEqual(r.header("apns-topic"), "com.apple.mgmt.External.abc")
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), #"{"mdm":"MAGIC"}"#)
        // An explicit topic is used as given for other push types too (no suffix added).
        let voip = notification { $0.apns = APNsOverrides(pushType: .voip, topic: "com.other.voip") }
        XCTAssertEqual(try request(voip).header("apns-topic"), "com.other.voip")
    }

    func testPriority() throws {
        XCTAssertEqual(try request(notification { $0.priority = .high }).header("apns-priority"), "10")
        XCTAssertEqual(try request(notification { $0.priority = .normal }).header("apns-priority"), "5")
        XCTAssertEqual(try request(notification { $0.priority = .low }).header("apns-priority"), "1")
        // Background must be 5, whatever the notification's priority.
        let silent = notification { $0.alert = nil; $0.contentAvailable = true; $0.priority = .high }
        XCTAssertEqual(try request(silent).header("apns-push-type"), "background")
        XCTAssertEqual(try request(silent).header("apns-priority"), "5")
        // Priority 1 is for alerts; other push types get 5. Push to Talk is always 10.
        XCTAssertEqual(try request(notification { $0.apns.pushType = .liveactivity; $0.priority = .low }).header("apns-priority"), "5")
        XCTAssertEqual(try request(notification { $0.apns.pushType = .pushtotalk; $0.priority = .low }).header("apns-priority"), "10")
        // An explicit header wins.
        XCTAssertEqual(try request(notification { $0.apns.headers = [("apns-priority", "5")] }).header("apns-priority"), "5")
    }

    func testExpiration() throws {
        // Without an expiry: 28 days after created_at, the lifetime every provider is told.
        XCTAssertEqual(try request(notification()).header("apns-expiration"), "\(1_795_262_400 + 28 * 86_400)")
        XCTAssertEqual(try request(notification { $0.expiresAt = self.created.addingTimeInterval(90.9) }).header("apns-expiration"), "1795262490")
        // ttl_seconds 0: do not store.
        XCTAssertEqual(try request(notification { $0.doNotStore = true }).header("apns-expiration"), "0")
        XCTAssertEqual(try request(notification { $0.apns.pushType = .pushtotalk }).header("apns-expiration"), "0")
        XCTAssertEqual(try request(notification { $0.apns.headers = [("apns-expiration", "1795300000")] }).header("apns-expiration"), "1795300000")
        let decoded = try PushNotification.decode(Array(#"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","ttl_seconds":0,"recipients":[{"token":"\#(token)","platform":"ios"}],"alert":{"body":"x"}}"#.utf8), policy: Examples.policy).get()
        XCTAssertTrue(decoded.doNotStore)
        XCTAssertNil(decoded.expiresAt)
        XCTAssertFalse(decoded.isExpired(at: created.addingTimeInterval(3600)))
        XCTAssertEqual(try request(decoded).header("apns-expiration"), "0")
    }

    func testHeaderOrderAndCollapseIDLimitInBytes() throws {
        let n = notification { $0.collapseKey = String(repeating: "é", count: 32); $0.expiresAt = self.created }
        XCTAssertEqual(try request(n).headers.map(\.name),
                       ["apns-push-type", "apns-topic", "apns-priority", "apns-id", "apns-expiration", "apns-collapse-id"])
        let tooLong = notification { $0.collapseKey = String(repeating: "é", count: 33) }  // 66 bytes
        guard case .failure(let error) = tooLong.request(for: tooLong.recipients[0], context: context) else { return XCTFail() }
        XCTAssertEqual(error.code, "BadCollapseId")
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","collapse_key":"\#(String(repeating: "é", count: 33))","recipients":[{"token":"\#(token)","platform":"ios"}],"alert":{"body":"x"}}"#
        guard case .failure(let intake) = PushNotification.decode(Array(json.utf8), policy: Examples.policy) else { return XCTFail("decoded") }
        XCTAssertEqual(intake.issues.map(\.path), ["collapse_key"])
    }

    func testAPNsIDIsDerivedFromNotificationAndDevice() throws {
        let r = try request(notification())
        XCTAssertEqual(r.header("apns-id"), DeliveryIdentity.apnsID(notificationID: notification().id, token: token))
        XCTAssertEqual(r.header("apns-id"), "56b03bec-5eb4-8480-b79c-1a92cf4c3dfb")
    }

    func testEveryAlertAndApsKey() throws {
        let n = notification {
            $0.alert = .init(title: "T", body: "B", subtitle: "S", titleLocKey: "TK", titleLocArgs: ["a"], subtitleLocKey: "SK",
                             subtitleLocArgs: ["b"], bodyLocKey: "BK", bodyLocArgs: ["c", "d"], launchImage: "L.png")
            $0.badge = 0
            $0.sound = .init(name: "s.caf", critical: true, volume: 1)
            $0.threadID = "th"
            $0.category = "CAT"
            $0.contentAvailable = true
            $0.mutableContent = true
            $0.targetContentID = "tc"
            $0.interruptionLevel = .critical
            $0.relevanceScore = 0.5
            $0.data = [("k", .int(1))]
        }
        XCTAssertEqual(try body(n), #"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","launch-image":"L.png","title-loc-key":"TK","title-loc-args":["a"],"subtitle-loc-key":"SK","subtitle-loc-args":["b"],"loc-key":"BK","loc-args":["c","d"]},"badge":0,"sound":{"critical":1,"name":"s.caf","volume":1},"thread-id":"th","category":"CAT","content-available":1,"mutable-content":1,"target-content-id":"tc","interruption-level":"critical","relevance-score":0.5},"k":1}"#)
        XCTAssertEqual(try body(notification { $0.sound = "default" }), #"{"aps":{"alert":{"body":"hi"},"sound":"default"}}"#)
    }

    func testExtraApsKeysMergeInPlace() throws {
        let n = notification {
            $0.badge = 1
            $0.apns.aps = [("badge", .int(9)), ("filter-criteria", .string("work"))]
        }
        XCTAssertEqual(try body(n), #"{"aps":{"alert":{"body":"hi"},"badge":9,"filter-criteria":"work"}}"#)
        let widgets = notification { $0.alert = nil; $0.apns.pushType = .widgets }
        XCTAssertEqual(try body(widgets), #"{"aps":{"content-changed":true}}"#)
    }

    func testPayloadLimitIs4096AndVoIP5120OnTheExactBody() throws {
        func sized(_ type: APNsPushType?, _ size: Int) -> PushNotification {
            notification {
                $0.apns.pushType = type
                $0.alert = .init(body: "x")
                let overhead = APNsTranslator.payload(for: $0).count - 1
                $0.alert = .init(body: String(repeating: "x", count: size - overhead))
            }
        }
        XCTAssertEqual(try request(sized(nil, 4096)).body.count, 4096)
        guard case .failure(let e1) = sized(nil, 4097).request(for: Recipient(token: token, platform: .ios), context: context) else { return XCTFail() }
        XCTAssertEqual(e1.code, "PayloadTooLarge")
        XCTAssertEqual(try request(sized(.voip, 5120)).body.count, 5120)
        guard case .failure(let e2) = sized(.voip, 5121).request(for: Recipient(token: token, platform: .ios), context: context) else { return XCTFail() }
        XCTAssertEqual(e2.code, "PayloadTooLarge")
        // Multi-byte characters count as bytes, escapes as written.
        XCTAssertEqual(try body(notification { $0.alert = .init(body: "é\"\n") }), #"{"aps":{"alert":{"body":"é\"\n"}}}"#)
    }

    /// Issue 16 item 7: a data-only notification goes out as a background push
    /// (priority 5); without `content-available: 1` iOS never wakes the app,
    /// though APNs accepts it. Every background push carries it.
    func testDataOnlyPushIsABackgroundPushThatWakesTheApp() throws {
        let dataOnly = notification { $0.alert = nil; $0.data = [("order", .string("42"))] }
        let r = try request(dataOnly)
        XCTAssertEqual(r.header("apns-push-type"), "background")
        XCTAssertEqual(r.header("apns-priority"), "5")
        XCTAssertEqual(try body(dataOnly), #"{"aps":{"content-available":1},"order":"42"}"#)
        // Asked for explicitly, or by push type with extra aps keys (the tree path): once, never twice.
        let asked = notification { $0.alert = nil; $0.contentAvailable = true }
        XCTAssertEqual(try body(asked), #"{"aps":{"content-available":1}}"#)
        let explicit = notification {
            $0.alert = nil; $0.apns.pushType = .background; $0.apns.aps = [("content-available", .int(1)), ("x", .int(2))]
        }
        XCTAssertEqual(try body(explicit), #"{"aps":{"content-available":1,"x":2}}"#)
        // A push that shows something is no background push and gets no content-available.
        XCTAssertEqual(try body(notification()), #"{"aps":{"alert":{"body":"hi"}}}"#)
        // Decoded from intake JSON, the same bytes.
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[{"token":"\#(token)","platform":"ios"}],"data":{"order":"42"}}"#
        let decoded = try PushNotification.decode(Array(json.utf8), policy: Examples.policy).get()
        XCTAssertEqual(try body(decoded), #"{"aps":{"content-available":1},"order":"42"}"#)
    }

    func testMissingTopicAndReservedKey() throws {
        let n = notification()
        guard case .failure(let e1) = n.request(for: n.recipients[0], context: .init(apnsTopic: nil, fcmProjectID: nil)) else { return XCTFail() }
        XCTAssertEqual(e1.code, "MissingTopic")
        let aps = notification { $0.data = [("aps", .object([]))] }
        guard case .failure(let e2) = aps.request(for: aps.recipients[0], context: context) else { return XCTFail() }
        XCTAssertEqual(e2.code, "ReservedKey")
    }
}
