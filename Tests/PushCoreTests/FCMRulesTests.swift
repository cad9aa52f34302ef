import Foundation
import XCTest
@testable import PushCore

/// Firebase's v1 `Message` rules, one test per rule, exact strings.
final class FCMRulesTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.app", fcmProjectID: "proj-1")
    let token = "fcm-token_AbCdEf0123456789:APA91bHx-example"
    let created = Date(timeIntervalSince1970: 1_795_262_400)

    func notification(_ configure: (inout PushNotification) -> Void = { _ in }) -> PushNotification {
        var n = PushNotification(id: UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10")!, app: "a", createdAt: created,
                                 recipients: [Recipient(token: token, platform: .android)], alert: .init(title: "T", body: "B"))
        configure(&n)
        return n
    }

    func body(_ n: PushNotification, now: Date? = nil) throws -> String {
        String(decoding: try n.request(for: n.recipients[0], context: context, now: now).get().body, as: UTF8.self)
    }

    func testRequestLineAndHeaders() throws {
        let n = notification()
        let r = try n.request(for: n.recipients[0], context: context).get()
        XCTAssertEqual(r.provider, .fcm)
        XCTAssertEqual(r.path, "/v1/projects/proj-1/messages:send")
        XCTAssertEqual(r.headers.map(\.name), ["content-type"])
        XCTAssertEqual(r.header("content-type"), "application/json; charset=utf-8")
        XCTAssertEqual(try body(n), #"{"message":{"token":"\#(token)","notification":{"title":"T","body":"B"},"android":{"priority":"HIGH","ttl":"2419200s"}}}"#)
    }

    /// Issue 16 item 9: FCM refuses (400 INVALID_ARGUMENT) a reserved key in
    /// any data map, not only the top-level one: `android.data` and
    /// `webpush.data` replace it on their platform. Intake refuses them with
    /// the field path, and translation of a notification built in code does too.
    func testReservedKeysAreRefusedInEveryDataMapThatReachesFCM() throws {
        let envelope = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[{"token":"\#(token)","platform":"android"}],"alert":{"title":"T"}"#
        let cases: [(json: String, path: String)] = [
            (#","fcm":{"android":{"data":{"gcm.notification.x":"1"}}}"#, "fcm.android.data.gcm.notification.x"),
            (#","fcm":{"android":{"data":{"ok":"1","google.x":"1"}}}"#, "fcm.android.data.google.x"),
            (#","fcm":{"android":{"data":{"from":"me"}}}"#, "fcm.android.data.from"),
            (#","fcm":{"android":{"data":{"message_type":"x"}}}"#, "fcm.android.data.message_type"),
            (#","fcm":{"webpush":{"data":{"gcm.n.e":"1"}}}"#, "fcm.webpush.data.gcm.n.e"),
            (#","fcm":{"webpush":{"data":{"from":"me"}}}"#, "fcm.webpush.data.from"),
        ]
        for (extra, path) in cases {
            switch PushNotification.decode(Array((envelope + extra + "}").utf8), policy: Examples.policy) {
            case .success: XCTFail("\(extra) was accepted")
            case .failure(let error):
                XCTAssertEqual(error.fieldPath, path, extra)
                XCTAssertEqual(error.reason, .invalidValue, extra)
            }
        }
        // Keys that only look alike stay allowed.
        for extra in [#","fcm":{"android":{"data":{"googlex":"1","gcmx":"1","fromage":"1","collapse_key":"1"}}}"#] {
            XCTAssertNoThrow(try PushNotification.decode(Array((envelope + extra + "}").utf8), policy: Examples.policy).get(), extra)
        }
        for block in ["android", "webpush"] {
            let n = notification {
                if block == "android" {
                    $0.fcm.android = [("data", .object([("gcm.notification.x", .string("1"))]))]
                } else {
                    $0.fcm.webpush = [("data", .object([("google.x", .string("1"))]))]
                }
            }
            guard case .failure(let error) = n.request(for: n.recipients[0], context: context) else { XCTFail(block); continue }
            XCTAssertEqual(error.code, "ReservedKey", block)
        }
    }

    func testExactlyOneTargetTokenTopicOrCondition() throws {
        let n = notification { $0.alert = nil; $0.data = [("k", .string("v"))] }
        for (target, member) in [(FCMTarget.topic("news"), #""topic":"news""#),
                                 (.condition("'a' in topics || 'b' in topics"), #""condition":"'a' in topics || 'b' in topics""#)] {
            let text = String(decoding: try n.request(for: target, context: context).get().body, as: UTF8.self)
            XCTAssertEqual(text, #"{"message":{\#(member),"data":{"k":"v"},"android":{"priority":"HIGH","ttl":"2419200s"},"apns":{"headers":{"apns-push-type":"background","apns-priority":"5","apns-expiration":"1797681600"},"payload":{"aps":{"content-available":1}}},"webpush":{"headers":{"TTL":"2419200"}}}}"#)
        }
    }

    func testDataIsAStringMapAndReservedKeysAreRefused() throws {
        let n = notification {
            $0.alert = nil
            $0.data = [("s", .string("x")), ("i", .int(-3)), ("d", .double(1.5)), ("b", .bool(false)), ("n", .null),
                       ("a", .array([.int(1), .string("two")])), ("o", .object([("k", .string("v\""))]))]
        }
        XCTAssertEqual(try body(n), #"{"message":{"token":"\#(token)","data":{"s":"x","i":"-3","d":"1.5","b":"false","n":"null","a":"[1,\"two\"]","o":"{\"k\":\"v\\\"\"}"},"android":{"priority":"HIGH","ttl":"2419200s"}}}"#)
        for key in ["from", "message_type", "google.c.a.e", "gcm.notification.title", "gcm.x"] {
            let bad = notification { $0.data = [(key, .string("v"))] }
            guard case .failure(let error) = bad.request(for: bad.recipients[0], context: context) else { return XCTFail(key) }
            XCTAssertEqual(error.code, "ReservedKey", key)
            let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[{"token":"\#(token)","platform":"android"}],"data":{"\#(key)":"v"}}"#
            guard case .failure(let intake) = PushNotification.decode(Array(json.utf8), policy: Examples.policy) else { return XCTFail(key) }
            XCTAssertEqual(intake.issues.map(\.path), ["data.\(key)"])
        }
        // collapse_key and other FCM words are allowed (FCM overrides them).
        XCTAssertNoThrow(try body(notification { $0.data = [("collapse_key", .string("x")), ("googlish", .string("y"))] }))
    }

    func testAndroidPriorityAndTTL() throws {
        XCTAssertTrue(try body(notification { $0.priority = .normal }).contains(#""android":{"priority":"NORMAL","ttl":"2419200s"}"#))
        XCTAssertTrue(try body(notification { $0.priority = .low }).contains(#""android":{"priority":"NORMAL","ttl":"2419200s"}"#))
        // TTL is relative: to createdAt by default, to `now` when given; whole seconds; never negative.
        let hour = notification { $0.expiresAt = self.created.addingTimeInterval(3600.9) }
        XCTAssertTrue(try body(hour).contains(#""ttl":"3600s""#))
        XCTAssertTrue(try body(hour, now: created.addingTimeInterval(600)).contains(#""ttl":"3000s""#))
        XCTAssertTrue(try body(hour, now: created.addingTimeInterval(7200)).contains(#""ttl":"0s""#))
        // Capped at 28 days.
        let year = notification { $0.expiresAt = self.created.addingTimeInterval(365 * 86400) }
        XCTAssertTrue(try body(year).contains(#""ttl":"2419200s""#))
        XCTAssertTrue(try body(notification { $0.doNotStore = true }).contains(#""ttl":"0s""#))
        // Without an expiry: 28 days, said, not left to FCM's default.
        XCTAssertTrue(try body(notification()).contains(#""ttl":"2419200s""#))
    }

    func testAndroidNotificationBlock() throws {
        let n = notification {
            $0.alert = .init(title: "T", body: "B", subtitle: "ignored on Android", titleLocKey: "TK", titleLocArgs: ["1"], bodyLocKey: "BK", bodyLocArgs: ["2"])
            $0.sound = .init(name: "chime", critical: true, volume: 0.3)
            $0.collapseKey = "ck"
            $0.category = "OPEN"
            $0.badge = 4
            $0.imageURL = "https://x.example/i.png"
        }
        XCTAssertEqual(try body(n), #"{"message":{"token":"\#(token)","notification":{"title":"T","body":"B","image":"https://x.example/i.png"},"android":{"priority":"HIGH","ttl":"2419200s","collapse_key":"ck","notification":{"title_loc_key":"TK","title_loc_args":["1"],"body_loc_key":"BK","body_loc_args":["2"],"sound":"chime","tag":"ck","click_action":"OPEN","notification_count":4}}}}"#)
        // A data-only message stays a data message: no notification blocks.
        let silent = notification { $0.alert = nil; $0.badge = 1; $0.sound = "s"; $0.data = [("k", .string("v"))] }
        XCTAssertEqual(try body(silent), #"{"message":{"token":"\#(token)","data":{"k":"v"},"android":{"priority":"HIGH","ttl":"2419200s"}}}"#)
    }

    func testOverridesDeepMerge() throws {
        let n = notification {
            $0.sound = "chime"
            $0.fcm = FCMOverrides(
                android: [("priority", .string("NORMAL")), ("notification", .object([("channel_id", .string("c1")), ("sound", .string("other"))])),
                          ("direct_boot_ok", .bool(true))],
                webpush: [("headers", .object([("TTL", .string("60"))]))],
                apns: [("headers", .object([("apns-priority", .string("5"))]))],
                fcmOptions: [("analytics_label", .string("l1"))])
        }
        XCTAssertEqual(try body(n), #"{"message":{"token":"\#(token)","notification":{"title":"T","body":"B"},"android":{"priority":"NORMAL","ttl":"2419200s","notification":{"sound":"other","channel_id":"c1"},"direct_boot_ok":true},"apns":{"headers":{"apns-priority":"5"}},"webpush":{"headers":{"TTL":"60"}},"fcm_options":{"analytics_label":"l1"}}}"#)
    }

    func testTopicMessagesCarryAnAPNsBlock() throws {
        let n = notification {
            $0.badge = 2
            $0.sound = "default"
            $0.collapseKey = "c"
            $0.doNotStore = true
            $0.fcmTargets = [.topic("news")]
        }
        let text = String(decoding: try n.request(for: .topic("news"), context: context).get().body, as: UTF8.self)
        XCTAssertEqual(text, #"{"message":{"topic":"news","notification":{"title":"T","body":"B"},"android":{"priority":"HIGH","ttl":"0s","collapse_key":"c","notification":{"sound":"default","tag":"c","notification_count":2}},"apns":{"headers":{"apns-push-type":"alert","apns-priority":"10","apns-expiration":"0","apns-collapse-id":"c"},"payload":{"aps":{"alert":{"title":"T","body":"B"},"badge":2,"sound":"default"}}},"webpush":{"headers":{"TTL":"0"}}}}"#)
    }

    func testSizeLimits4096ForTokensAnd2048ForTopics() throws {
        func sized(_ target: FCMTranslator.Target, _ size: Int) -> PushNotification {
            notification {
                $0.alert = nil
                $0.data = [("k", .string("x"))]
                let overhead = FCMTranslator.message(for: $0, target: target, now: nil).count - 1
                $0.data = [("k", .string(String(repeating: "x", count: size - overhead)))]
            }
        }
        let tokenTarget = FCMTranslator.Target.token(token)
        XCTAssertEqual(FCMTranslator.message(for: sized(tokenTarget, 4096), target: tokenTarget, now: nil).count, 4096)
        XCTAssertNoThrow(try body(sized(tokenTarget, 4096)))
        guard case .failure(let e1) = sized(tokenTarget, 4097).request(for: Recipient(token: token, platform: .android), context: context) else { return XCTFail() }
        XCTAssertEqual(e1.code, "PayloadTooLarge")
        let topic = FCMTranslator.Target.topic("news")
        XCTAssertNoThrow(try sized(topic, 2048).request(for: .topic("news"), context: context).get())
        guard case .failure(let e2) = sized(topic, 2049).request(for: .topic("news"), context: context) else { return XCTFail() }
        XCTAssertEqual(e2.code, "PayloadTooLarge")
    }

    func testMalformedTokenAndMissingProject() throws {
        let n = notification()
        guard case .failure(let e1) = n.request(for: Recipient(token: "short", platform: .android), context: context) else { return XCTFail() }
        XCTAssertTrue(e1.tokenIsInvalid)
        guard case .failure(let e2) = n.request(for: n.recipients[0], context: .init(apnsTopic: nil, fcmProjectID: "")) else { return XCTFail() }
        XCTAssertEqual(e2.code, "MissingProject")
    }

    func testTopicAndConditionSyntax() {
        XCTAssertTrue(FCMTranslator.isValidTopicName("news-EU_1.~%"))
        XCTAssertFalse(FCMTranslator.isValidTopicName("news/eu"))
        XCTAssertFalse(FCMTranslator.isValidTopicName(""))
        XCTAssertEqual(FCMTranslator.conditionTopicCount("'a' in topics && ('b' in topics || 'c' in topics)"), 3)
    }
}
