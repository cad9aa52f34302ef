import Foundation
import XCTest
@testable import PushCore

/// The cheap FCM paths give exactly what the general ones give: the token
/// check read in place accepts what the UTF8View walk accepted, and the
/// message written straight out equals the tree (and the tree code it replaced).
final class FCMWriterTests: XCTestCase {
    /// The token check as it was, walking `String.UTF8View`: the reference.
    static func referenceIsWellFormedToken(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard (20...4096).contains(utf8.count) else { return false }
        return utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ":")
        }
    }

    func testTokenCheckAcceptsExactlyWhatItDid() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-:")
        func token(_ count: Int) -> String { String((0..<count).map { alphabet[$0 % alphabet.count] }) }
        var cases: [(String, Bool)] = [
            ("", false), (token(19), false), (token(20), true), (token(163), true), (token(4096), true), (token(4097), false),
            (String(repeating: "é", count: 10), false),  // 20 bytes, 10 characters: non-ASCII
            (token(18) + "é", false), (token(4094) + "é", false), (token(4095) + "é", false),
            (token(40) + "\u{301}", false), (token(30) + "😀" + token(30), false), (token(30) + "\u{80}", false),
        ]
        // Every ASCII byte (and a few others) at the start, the middle and the end of a 20- and a 4096-byte token.
        for byte in Array(0x00...0x7F) + [0xA0, 0xFF] {
            let scalar = String(UnicodeScalar(UInt8(byte)))
            for length in [20, 4096] {
                for position in [0, length / 2, length - 1] {
                    var chars = Array(token(length))
                    chars[position] = Character(scalar)
                    let s = String(chars)
                    cases.append((s, Self.referenceIsWellFormedToken(s)))
                }
            }
        }
        // The forbidden classes, spelled out, so the reference itself is pinned.
        for forbidden in [" ", "/", "+", "=", ".", "!", "@", "[", "`", "{", "~", "\u{0}", "\u{7F}", "\n", "\"", "\\"] {
            cases.append((token(10) + forbidden + token(10), false))
        }
        for (s, expected) in cases {
            XCTAssertEqual(FCMTranslator.isWellFormedToken(s), expected, "\(s.utf8.count) bytes: \(s.prefix(40).debugDescription)")
            XCTAssertEqual(Self.referenceIsWellFormedToken(s), expected, "reference, \(s.utf8.count) bytes")
        }
        // Strings made from slices and from decoded bytes (all native here, so the in-place read).
        XCTAssertTrue(FCMTranslator.isWellFormedToken(String(("é" + token(30)).dropFirst())))
        XCTAssertFalse(FCMTranslator.isWellFormedToken(String(decoding: Array(token(30).utf8) + [0xFF], as: UTF8.self)))
    }

    /// `message` as the tree code before the direct writer built it (copied
    /// from it unchanged): the bytes the writer must keep giving.
    static func referenceMessage(for n: PushNotification, target: FCMTranslator.Target, now: Date?) -> [UInt8] {
        var message: [(key: String, value: JSONValue)] = [target.member]
        let hasAlert = !(n.alert?.isEmpty ?? true)
        if hasAlert, let alert = n.alert {
            var fields: [(key: String, value: JSONValue)] = []
            if let title = alert.title { fields.append(("title", .string(title))) }
            if let body = alert.body { fields.append(("body", .string(body))) }
            if let image = n.imageURL { fields.append(("image", .string(image))) }
            if !fields.isEmpty { message.append(("notification", .object(fields))) }
        }
        if !n.data.isEmpty {
            message.append(("data", .object(n.data.map { member in
                if case .string = member.value { return member }
                return (member.key, .string(String(decoding: member.value.encoded(), as: UTF8.self)))
            })))
        }
        message.append(("android", .object(JSONValue.merge(referenceAndroid(for: n, hasAlert: hasAlert, now: now), n.fcm.android))))
        var apns: [(key: String, value: JSONValue)] = []
        if case .token = target {} else { apns = FCMTranslator.apnsConfig(for: n) }
        apns = JSONValue.merge(apns, n.fcm.apns)
        if !apns.isEmpty { message.append(("apns", .object(apns))) }
        var webpush: [(key: String, value: JSONValue)] = []
        if case .token = target {} else { webpush = FCMTranslator.webpushConfig(for: n, now: now) }
        webpush = JSONValue.merge(webpush, n.fcm.webpush)
        if !webpush.isEmpty { message.append(("webpush", .object(webpush))) }
        // A campaign that is a valid label is the label when none is set (null: none).
        var options = n.fcm.fcmOptions
        if let campaign = n.campaign, campaign.utf8.count <= 50, FCMTranslator.isValidTopicName(campaign),
           !options.contains(where: { $0.key == "analytics_label" && $0.value != .null }) {
            options = options.filter { $0.key != "analytics_label" } + [("analytics_label", .string(campaign))]
        }
        if !options.isEmpty { message.append(("fcm_options", .object(options))) }
        return JSONValue.object(message).encoded()
    }

    static func referenceAndroid(for n: PushNotification, hasAlert: Bool, now: Date?) -> [(key: String, value: JSONValue)] {
        var android: [(key: String, value: JSONValue)] = [
            ("priority", .string(n.priority == .high ? "HIGH" : "NORMAL")),
        ]
        android.append(("ttl", .string(FCMTranslator.ttl(for: n, now: now))))
        if let collapseKey = n.collapseKey { android.append(("collapse_key", .string(collapseKey))) }
        guard hasAlert else { return android }
        var notification: [(key: String, value: JSONValue)] = []
        if let alert = n.alert {
            if let key = alert.titleLocKey { notification.append(("title_loc_key", .string(key))) }
            if let args = alert.titleLocArgs { notification.append(("title_loc_args", .array(args.map(JSONValue.string)))) }
            if let key = alert.bodyLocKey { notification.append(("body_loc_key", .string(key))) }
            if let args = alert.bodyLocArgs { notification.append(("body_loc_args", .array(args.map(JSONValue.string)))) }
        }
        if let sound = n.sound { notification.append(("sound", .string(sound.name))) }
        if let collapseKey = n.collapseKey { notification.append(("tag", .string(collapseKey))) }
        if let category = n.category { notification.append(("click_action", .string(category))) }
        if let badge = n.badge { notification.append(("notification_count", .int(Int64(badge)))) }
        if !notification.isEmpty { android.append(("notification", .object(notification))) }
        return android
    }

    /// Each FCM-relevant field set and unset, one at a time and a few together.
    static let variations: [(String, @Sendable (inout PushNotification) -> Void)] = [
        ("as is", { _ in }),
        ("no alert", { $0.alert = nil }),
        ("title only", { $0.alert = .init(title: "Só o título") }),
        ("body only", { $0.alert = .init(body: "B \"quoted\"\n") }),
        ("subtitle only", { $0.alert = .init(subtitle: "S") }),
        ("loc keys only", { $0.alert = .init(titleLocKey: "TK", titleLocArgs: ["1", "é"], bodyLocKey: "BK", bodyLocArgs: []) }),
        ("loc keys, no blocks", { $0.alert = .init(titleLocKey: "TK"); $0.imageURL = nil; $0.sound = nil; $0.collapseKey = nil; $0.category = nil; $0.badge = nil }),
        ("subtitle, nothing else", { $0.alert = .init(subtitle: "S"); $0.imageURL = nil; $0.sound = nil; $0.collapseKey = nil; $0.category = nil; $0.badge = nil }),
        ("full alert", { $0.alert = .init(title: "T\u{1}", body: "B", subtitle: "S", titleLocKey: "tk", titleLocArgs: ["a"], subtitleLocKey: "sk", subtitleLocArgs: ["s"], bodyLocKey: "bk", bodyLocArgs: ["c", "d"], launchImage: "L.png") }),
        ("image", { $0.imageURL = "https://x.example/i.png?a=1&b=\"2\"" }),
        ("no image", { $0.imageURL = nil }),
        ("image, no alert", { $0.imageURL = "https://x.example/i.png"; $0.alert = nil }),
        ("badge", { $0.badge = 7 }),
        ("badge 0", { $0.badge = 0 }),
        ("no badge", { $0.badge = nil }),
        ("sound", { $0.sound = "chime" }),
        ("critical sound", { $0.sound = .init(name: "alarm", critical: true, volume: 0.5) }),
        ("no sound", { $0.sound = nil }),
        ("priority high", { $0.priority = .high }),
        ("priority normal", { $0.priority = .normal }),
        ("priority low", { $0.priority = .low }),
        ("collapse key", { $0.collapseKey = "ck-1" }),
        ("no collapse key", { $0.collapseKey = nil }),
        ("category", { $0.category = "OPEN" }),
        ("no category", { $0.category = nil }),
        ("expires in an hour", { $0.expiresAt = $0.createdAt.addingTimeInterval(3600.5); $0.doNotStore = false }),
        ("expired", { $0.expiresAt = $0.createdAt.addingTimeInterval(-10); $0.doNotStore = false }),
        ("expires in a year", { $0.expiresAt = $0.createdAt.addingTimeInterval(365 * 86400); $0.doNotStore = false }),
        ("never expires", { $0.expiresAt = nil; $0.doNotStore = false }),
        ("ttl_seconds 0", { $0.expiresAt = $0.createdAt; $0.doNotStore = true }),
        ("string data with escapes and non-ASCII", {
            $0.data = [("q", .string("a\"b\\c\n\t\u{0}\u{1F}")), ("ключ", .string("日本語 😀")), ("e", .string(""))]
        }),
        ("typed data", {
            $0.data = [("i", .int(-3)), ("d", .double(1.5)), ("b", .bool(true)), ("n", .null),
                       ("a", .array([.int(1), .string("two\"")])), ("o", .object([("k", .string("v\n"))]))]
        }),
        ("no data", { $0.data = [] }),
        ("android override", {
            $0.fcm.android = [("priority", .string("NORMAL")), ("notification", .object([("channel_id", .string("c1")), ("sound", .string("other"))])),
                              ("direct_boot_ok", .bool(true))]
        }),
        ("android override, no alert", { $0.alert = nil; $0.fcm.android = [("notification", .object([("icon", .string("i"))]))] }),
        ("webpush override", { $0.fcm.webpush = [("headers", .object([("TTL", .string("60")), ("Urgency", .string("high"))]))] }),
        ("apns override", { $0.fcm.apns = [("headers", .object([("apns-priority", .string("5"))])), ("payload", .object([("aps", .object([("badge", .int(9))]))]))] }),
        ("fcm_options override", { $0.fcm.fcmOptions = [("analytics_label", .string("l1"))] }),
        ("all overrides", {
            $0.fcm = FCMOverrides(android: [("ttl", .string("5s"))], webpush: [("data", .object([("x", .string("y"))]))],
                                  apns: [("fcm_options", .object([("image", .string("j"))]))], fcmOptions: [("analytics_label", .string("l2"))])
        }),
        ("no overrides", { $0.fcm = FCMOverrides() }),
        ("campaign", { $0.campaign = "spring-2026" }),
        ("campaign, not a label", { $0.campaign = "Soldes d'été" }),
        ("campaign and its own label", { $0.campaign = "spring"; $0.fcm.fcmOptions = [("analytics_label", .string("own"))] }),
        ("campaign and a null label", { $0.campaign = "spring"; $0.fcm.fcmOptions = [("analytics_label", .null)] }),
        ("no campaign", { $0.campaign = nil }),
        ("apns.aps and headers (topic apns block)", {
            $0.apns.aps = [("content-state", .object([("n", .int(1))]))]
            $0.apns.headers = [("apns-collapse-id", "cid")]
        }),
        ("everything", {
            $0.alert = .init(title: "T", body: "B", titleLocKey: "tk", titleLocArgs: ["a"], bodyLocKey: "bk", bodyLocArgs: ["c"])
            $0.imageURL = "https://x.example/i.png"
            $0.badge = 3
            $0.sound = "s"
            $0.priority = .normal
            $0.collapseKey = "c"
            $0.category = "cat"
            $0.expiresAt = $0.createdAt.addingTimeInterval(60)
            $0.data = [("k", .string("v\u{7F}é"))]
        }),
    ]

    func testDirectMessageEqualsTheTreeAndTheCodeItReplaced() throws {
        var notifications: [PushNotification] = []
        for url in try Examples.files("valid") {
            guard case .success(let n) = PushNotification.decode(try Examples.bytes(url), policy: Examples.policy) else { return XCTFail(url.lastPathComponent) }
            notifications.append(n)
        }
        XCTAssertGreaterThanOrEqual(notifications.count, 13)
        let token = "fcm-token_AbCdEf0123456789:APA91bHx-example"
        let targets: [FCMTranslator.Target] = [.token(token), .token("bad \"token\" é"), .topic("news"), .condition("'a' in topics || 'b' in topics")]
        let context = TranslationContext(apnsTopic: "com.example.app", fcmProjectID: "proj-1")
        var compared = 0
        for base in notifications {
            for (name, vary) in Self.variations {
                var n = base
                vary(&n)
                for target in targets {
                    for now in [nil, n.createdAt.addingTimeInterval(600)] {
                        let direct = FCMTranslator.message(for: n, target: target, now: now)
                        let tree = JSONValue.object(FCMTranslator.messageMembers(for: n, target: target, now: now)).encoded()
                        let reference = Self.referenceMessage(for: n, target: target, now: now)
                        let what = "\(n.app) \(n.id), \(name), \(target), now \(String(describing: now))"
                        XCTAssertEqual(String(decoding: direct, as: UTF8.self), String(decoding: tree, as: UTF8.self), what)
                        XCTAssertEqual(direct, reference, what)
                        // The request's body is the same message in its wrapper, written into one buffer.
                        switch FCMTranslator.request(for: n, target: target, context: context, now: now) {
                        case .success(let request):
                            XCTAssertEqual(request.body, Array(#"{"message":"#.utf8) + reference + [UInt8(ascii: "}")], what)
                        case .failure(let error):
                            let reserved = n.data.contains { FCMTranslator.isReservedDataKey($0.key) }
                            XCTAssertTrue(reserved || (error.code == "PayloadTooLarge" && reference.count > target.maxMessageBytes), "\(what): \(error)")
                        }
                        compared += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(compared, 1000)
    }

    func testSizeLimitIssuesMeasureTheSameMessage() throws {
        // The limit is checked on the same bytes at the boundary: one byte more is over.
        let token = "fcm-token_AbCdEf0123456789:APA91bHx-example"
        for (target, limit) in [(FCMTranslator.Target.token(token), 4096), (.topic("news"), 2048)] {
            var n = PushNotification(id: UUID(), app: "a", createdAt: Date(timeIntervalSince1970: 1_795_262_400),
                                     recipients: [Recipient(token: token, platform: .android)], alert: .init(title: "T", body: "B"))
            if case .topic(let t) = target { n.recipients = []; n.fcmTargets = [.topic(t)] }
            n.data = [("k", .string(""))]
            let overhead = Self.referenceMessage(for: n, target: target, now: nil).count
            for extra in [0, 1] {
                n.data = [("k", .string(String(repeating: "é", count: (limit - overhead) / 2) + String(repeating: "x", count: (limit - overhead) % 2 + extra)))]
                let size = Self.referenceMessage(for: n, target: target, now: nil).count
                XCTAssertEqual(size, limit + extra)
                XCTAssertEqual(n.payloadLimitIssues().isEmpty, extra == 0, "\(target) \(size)")
            }
        }
    }
}
