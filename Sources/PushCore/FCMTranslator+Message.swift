import Foundation

extension FCMTranslator {
    /// The exact bytes of `message`: target, `notification`, `data`,
    /// `android`, `apns` (generated for topic/condition targets, which may
    /// reach Apple devices), `webpush`, `fcm_options`; each `fcm.*` override
    /// deep-merged over what is generated.
    public static func message(for n: PushNotification, target: Target, now: Date?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedMessageBytes(for: n, target: target))
        writeMessage(for: n, target: target, now: now, into: &out)
        return out
    }

    /// `message` as a tree: the same members as the direct writer
    /// (`writeMessage`) follows, built one by one (tests hold the two equal).
    static func messageMembers(for n: PushNotification, target: Target, now: Date?) -> [(key: String, value: JSONValue)] {
        var message: [(key: String, value: JSONValue)] = []
        forEachMessageMember(of: n, target: target, now: now) { key, member in
            switch member {
            case .value(let value):
                message.append((key, value))
            case .notification:
                var fields: [(key: String, value: JSONValue)] = []
                forEachNotificationField(of: n) { fields.append(($0, .string($1))) }
                if !fields.isEmpty { message.append((key, .object(fields))) }
            case .data:
                message.append((key, .object(n.data.map { ($0.key, dataValue($0.value)) })))
            case .android(let hasAlert):
                message.append((key, .object(JSONValue.merge(android(for: n, hasAlert: hasAlert, now: now), n.fcm.android))))
            }
        }
        return message
    }

    /// A member of `message` as generated: a value, or a block whose members
    /// the caller writes or builds from the lists below.
    enum MessageMember {
        /// The target, and the blocks taken as they are or built as a tree
        /// (the topic `apns` block, merged with `fcm.apns`; `webpush`; `fcm_options`).
        case value(JSONValue)
        /// `forEachNotificationField`; left out when it has none.
        case notification
        /// `n.data`, every value as a string (`dataValue`).
        case data
        /// `forEachAndroidMember`, with `fcm.android` deep-merged over it.
        case android(hasAlert: Bool)
    }

    /// The members of `message` in order: the one list both the tree and the
    /// direct writer follow.
    static func forEachMessageMember(of n: PushNotification, target: Target, now: Date?, _ body: (String, MessageMember) -> Void) {
        let targetMember = target.member
        body(targetMember.key, .value(targetMember.value))
        let hasAlert = !(n.alert?.isEmpty ?? true)
        if hasAlert { body("notification", .notification) }
        if !n.data.isEmpty { body("data", .data) }
        body("android", .android(hasAlert: hasAlert))
        var apns: [(key: String, value: JSONValue)] = []
        if case .token = target {} else { apns = apnsConfig(for: n) }
        apns = JSONValue.merge(apns, n.fcm.apns)
        if !apns.isEmpty { body("apns", .value(.object(apns))) }
        var webpush: [(key: String, value: JSONValue)] = []
        if case .token = target {} else { webpush = webpushConfig(for: n, now: now) }
        webpush = JSONValue.merge(webpush, n.fcm.webpush)
        if !webpush.isEmpty { body("webpush", .value(.object(webpush))) }
        let options = fcmOptions(for: n)
        if !options.isEmpty { body("fcm_options", .value(.object(options))) }
    }

    /// `message.fcm_options`: `fcm.fcm_options` as given, with the campaign as
    /// its `analytics_label` when it sets none and the campaign is a valid
    /// label (`Campaign.analyticsLabel`), so FCM's delivery data is grouped
    /// by campaign without the producer saying it twice. A label given as
    /// `null` is absent (as everywhere in the envelope), so it is replaced.
    static func fcmOptions(for n: PushNotification) -> [(key: String, value: JSONValue)] {
        guard let label = Campaign.analyticsLabel(for: n.campaign) else { return n.fcm.fcmOptions }
        var options = n.fcm.fcmOptions
        for member in options where member.key == "analytics_label" {
            if case .null = member.value { continue }
            return options
        }
        options.removeAll { $0.key == "analytics_label" }
        options.append(("analytics_label", .string(label)))
        return options
    }

    /// The cross-platform `notification` block's fields present, in order
    /// (only asked for when the alert shows something).
    static func forEachNotificationField(of n: PushNotification, _ body: (String, String) -> Void) {
        if let title = n.alert?.title { body("title", title) }
        if let text = n.alert?.body { body("body", text) }
        if let image = n.imageURL { body("image", image) }
    }

    /// A `data` value as FCM takes it: strings as they are, anything else as its JSON text.
    static func dataValue(_ value: JSONValue) -> JSONValue {
        if case .string = value { return value }
        return .string(String(decoding: value.encoded(), as: UTF8.self))
    }

    /// `android.ttl` in whole seconds: `0s` for do-not-store, else the time
    /// left from `now` (or `createdAt`) until the expiry, or until 28 days
    /// after `createdAt` without one (`PushNotification.storageSeconds`),
    /// at most 28 days.
    public static func ttl(for n: PushNotification, now: Date?) -> String {
        "\(n.storageSeconds(now: now, cap: maxTTLSeconds))s"
    }

    /// `AndroidConfig` as a tree (before any `fcm.android` merge): the
    /// members `forEachAndroidMember` lists.
    static func android(for n: PushNotification, hasAlert: Bool, now: Date?) -> [(key: String, value: JSONValue)] {
        var android: [(key: String, value: JSONValue)] = []
        forEachAndroidMember(of: n, hasAlert: hasAlert, now: now) { key, member in
            switch member {
            case .value(let value):
                android.append((key, value))
            case .notification:
                var fields: [(key: String, value: JSONValue)] = []
                forEachAndroidNotificationField(of: n) { fields.append(($0, $1)) }
                if !fields.isEmpty { android.append((key, .object(fields))) }
            }
        }
        return android
    }

    /// A generated `AndroidConfig` member: a value, or the `AndroidNotification`
    /// block (`forEachAndroidNotificationField`; left out when it has none).
    enum AndroidMember {
        case value(JSONValue)
        case notification
    }

    /// `AndroidConfig` in order: priority, ttl, collapse_key and, for alerts,
    /// the `AndroidNotification`.
    static func forEachAndroidMember(of n: PushNotification, hasAlert: Bool, now: Date?, _ body: (String, AndroidMember) -> Void) {
        body("priority", .value(.string(n.priority == .high ? "HIGH" : "NORMAL")))
        body("ttl", .value(.string(ttl(for: n, now: now))))
        if let collapseKey = n.collapseKey { body("collapse_key", .value(.string(collapseKey))) }
        if hasAlert { body("notification", .notification) }
    }

    /// `AndroidNotification`'s fields present, in order: loc keys, sound,
    /// tag = collapse key (so a newer notification replaces the shown one as
    /// `apns-collapse-id` does), click_action = category, notification_count = badge.
    static func forEachAndroidNotificationField(of n: PushNotification, _ body: (String, JSONValue) -> Void) {
        if let alert = n.alert {
            if let key = alert.titleLocKey { body("title_loc_key", .string(key)) }
            if let args = alert.titleLocArgs { body("title_loc_args", .array(args.map(JSONValue.string))) }
            if let key = alert.bodyLocKey { body("body_loc_key", .string(key)) }
            if let args = alert.bodyLocArgs { body("body_loc_args", .array(args.map(JSONValue.string))) }
        }
        if let sound = n.sound { body("sound", .string(sound.name)) }
        if let collapseKey = n.collapseKey { body("tag", .string(collapseKey)) }
        if let category = n.category { body("click_action", .string(category)) }
        if let badge = n.badge { body("notification_count", .int(Int64(badge))) }
    }

    /// `ApnsConfig` for topic/condition messages: the APNs headers and the
    /// `aps` dictionary APNsTranslator would send (FCM adds the data as
    /// custom keys), and the image as `fcm_options.image`.
    static func apnsConfig(for n: PushNotification) -> [(key: String, value: JSONValue)] {
        var headers: [(key: String, value: JSONValue)] = [
            ("apns-push-type", .string(APNsTranslator.pushType(for: n).rawValue)),
            ("apns-priority", .string(APNsTranslator.priority(for: n))),
            ("apns-expiration", .string(APNsTranslator.expiration(for: n))),
        ]
        if let collapseID = n.apns.header("apns-collapse-id") ?? n.collapseKey {
            headers.append(("apns-collapse-id", .string(collapseID)))
        }
        var config: [(key: String, value: JSONValue)] = [("headers", .object(headers))]
        var aps = APNsTranslator.apsMembers(for: n, type: APNsTranslator.pushType(for: n))
        let showsImage = n.imageURL != nil && !(n.alert?.isEmpty ?? true)
        if showsImage, !aps.contains(where: { $0.key == "mutable-content" }) {
            aps.append(("mutable-content", .int(1)))  // FCM: the image needs the service extension
        }
        if !aps.isEmpty { config.append(("payload", .object([("aps", .object(aps))]))) }
        if showsImage, let image = n.imageURL {
            config.append(("fcm_options", .object([("image", .string(image))])))
        }
        return config
    }

    /// `WebpushConfig` for topic/condition messages, which may reach web
    /// apps: the `TTL` header, the same lifetime as `android.ttl`, in seconds.
    static func webpushConfig(for n: PushNotification, now: Date?) -> [(key: String, value: JSONValue)] {
        [("headers", .object([("TTL", .string(String(n.storageSeconds(now: now, cap: maxTTLSeconds))))]))]
    }
}
