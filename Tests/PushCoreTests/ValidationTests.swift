import Foundation
import XCTest
@testable import PushCore

/// Field paths and reasons for the envelope's newer fields; nothing crashes.
final class ValidationTests: XCTestCase {
    let ios = String(repeating: "ab", count: 32)

    func issues(_ extra: String, recipients: String? = nil) -> [String: String] {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":\#(recipients ?? #"[{"token":"\#(ios)","platform":"ios"}]"#)\#(extra)}"#
        switch PushNotification.decode(Array(json.utf8), policy: Examples.policy) {
        case .success: return [:]
        case .failure(let error):
            XCTAssertEqual(error.kind, .invalid)
            return Dictionary(error.issues.map { ($0.path, $0.reason) }, uniquingKeysWith: { a, _ in a })
        }
    }

    func testEveryNewFieldReportsItsPath() {
        let found = issues(#","alert":{"title":1,"title_loc_args":["a",2],"subtitle_loc_args":["x"],"colour":"red"},"sound":{"volume":-1},"category":"","thread_id":7,"mutable_content":"yes","interruption_level":"loud","relevance_score":"high","target_content_id":"","image_url":"ftp://x/y","apns":{"push_type":"push","aps":[],"headers":{"apns-priority":"7","apns-expiration":"soon","apns-collapse-id":"","apns-id":"x","x-custom":"y"},"extra":1},"fcm":{"android":{"priority":"URGENT","notification":{"notification_count":-1,"visibility":"ALL","notification_priority":"TOP"}},"webpush":{"headers":{"TTL":60},"fcm_options":{"link":"nope"}},"apns":[],"fcm_options":{"analytics_label":"has space"},"ios":{}}"#)
        for path in ["alert.title", "alert.title_loc_args[1]", "alert.subtitle_loc_args", "alert.colour", "sound.name", "sound.volume",
                     "category", "thread_id", "mutable_content", "interruption_level", "relevance_score", "target_content_id", "image_url",
                     "apns.push_type", "apns.aps", "apns.headers.apns-priority", "apns.headers.apns-expiration", "apns.headers.apns-collapse-id",
                     "apns.headers.apns-id", "apns.headers.x-custom", "apns.extra",
                     "fcm.android.priority", "fcm.android.notification.notification_count", "fcm.android.notification.visibility",
                     "fcm.android.notification.notification_priority", "fcm.webpush.headers.TTL", "fcm.webpush.fcm_options.link",
                     "fcm.apns", "fcm.fcm_options.analytics_label", "fcm.ios"] {
            XCTAssertNotNil(found[path], "no issue for \(path): \(found)")
        }
        XCTAssertEqual(found["alert.subtitle_loc_args"], "needs subtitle_loc_key")
    }

    func testRecipientForms() throws {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","alert":{"body":"b"},"recipients":[{"user_id":"u1"},{"token":"\#(ios)","platform":"ios"},{"topic":"news"},{"condition":"'a' in topics"},{"user_id":"u1"},{"topic":"news"}]}"#
        let n = try PushNotification.decode(Array(json.utf8), policy: Examples.policy).get()
        XCTAssertEqual(n.recipients, [Recipient(token: ios, platform: .ios)])
        XCTAssertEqual(n.userRecipients, ["u1"])
        XCTAssertEqual(n.fcmTargets, [.topic("news"), .condition("'a' in topics")])
        XCTAssertEqual(n.partitionKey, ios)
        let onlyUsers = try PushNotification.decode(Array(json.replacingOccurrences(of: #"{"token":"\#(ios)","platform":"ios"},"#, with: "").utf8), policy: Examples.policy).get()
        XCTAssertEqual(onlyUsers.partitionKey, "u1")

        let bad = issues("", recipients: #"[{"platform":"ios"},{"user_id":""},{"topic":"a b"},{"condition":"x"},{},{"token":"t","platform":"web"},7,{"user_id":"u","extra":1}]"#)
        for path in ["recipients[0].token", "recipients[1].user_id", "recipients[2].topic", "recipients[3].condition", "recipients[4]",
                     "recipients[5].platform", "recipients[6]", "recipients[7].extra", "alert"] {
            XCTAssertNotNil(bad[path], "no issue for \(path): \(bad)")
        }
    }

    func testContentRules() {
        // A Live Activity needs its ActivityKit keys; start needs the attributes.
        let start = issues(#","apns":{"push_type":"liveactivity","aps":{"event":"start","timestamp":1}}"#)
        XCTAssertEqual(Set(start.keys), ["apns.aps.content-state", "apns.aps.attributes-type", "apns.aps.attributes"])
        XCTAssertEqual(issues(#","apns":{"push_type":"liveactivity","aps":{"event":"end","timestamp":1}}"#), [:])
        // Non-alert push types need no alert; the empty envelope still does.
        XCTAssertEqual(issues(#","apns":{"push_type":"complication"}"#), [:])
        XCTAssertNotNil(issues("")["alert"])
        XCTAssertNotNil(issues(#","alert":{}"#)["alert"])
        XCTAssertEqual(issues(#","sound":"ping""#), [:])
        XCTAssertEqual(issues(#","alert":{"body_loc_key":"K"}"#), [:])
    }

    func testFCMAndroidOverrideTypes() {
        XCTAssertEqual(issues(##","alert":{"body":"b"},"fcm":{"android":{"ttl":"3.5s","priority":"HIGH","notification":{"color":"#A0b1C2"}}}"##), [:])
        XCTAssertNotNil(issues(#","alert":{"body":"b"},"fcm":{"android":{"ttl":"2419201s"}}"#)["fcm.android.ttl"])
        XCTAssertNotNil(issues(#","alert":{"body":"b"},"fcm":{"android":{"data":{"k":1}}}"#)["fcm.android.data.k"])
    }

    func testSourceCompatibleInitialisers() {
        // The worker's demo builds notifications like this; it must keep compiling.
        let silent = Bool.random()
        let now = Date(timeIntervalSince1970: 1_795_262_400)
        let n = PushNotification(
            id: UUID(), app: "a", createdAt: now, expiresAt: now.addingTimeInterval(60), priority: silent ? .low : .high,
            collapseKey: nil, recipients: [Recipient(token: ios, platform: .ios)],
            alert: silent ? nil : .init(title: "t", body: "b"), badge: silent ? nil : 1, sound: silent ? nil : "default",
            contentAvailable: silent, data: [("k", .string("v"))])
        XCTAssertEqual(n.sound?.name, silent ? nil : "default")
        XCTAssertEqual(try PushNotification.decode(n.intakeJSON().encoded(), policy: Examples.policy).get(), n)
    }
}
