import Foundation

extension FCMTranslator {
    /// The exact bytes of `message`: target, `notification`, `data`,
    /// `android`, `apns` (generated for topic/condition targets, which may
    /// reach Apple devices), `webpush`, `fcm_options`; each `fcm.*` override
    /// deep-merged over what is generated.
    public static func message(for n: PushNotification, target: Target, now: Date?) -> [UInt8] {
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
        message.append(("android", .object(JSONValue.merge(android(for: n, hasAlert: hasAlert, now: now), n.fcm.android))))
        var apns: [(key: String, value: JSONValue)] = []
        if case .token = target {} else { apns = apnsConfig(for: n) }
        apns = JSONValue.merge(apns, n.fcm.apns)
        if !apns.isEmpty { message.append(("apns", .object(apns))) }
        if !n.fcm.webpush.isEmpty { message.append(("webpush", .object(n.fcm.webpush))) }
        if !n.fcm.fcmOptions.isEmpty { message.append(("fcm_options", .object(n.fcm.fcmOptions))) }
        var out: [UInt8] = []
        out.reserveCapacity(512)
        JSONValue.object(message).write(into: &out)
        return out
    }

    /// `android.ttl` in whole seconds: `0s` for do-not-store, else the time
    /// left until `expiresAt` from `now` (or `createdAt`), capped at 28 days;
    /// nil (FCM's default, 28 days) when the notification does not expire.
    public static func ttl(for n: PushNotification, now: Date?) -> String? {
        if n.doNotStore { return "0s" }
        guard let expiresAt = n.expiresAt else { return nil }
        let left = expiresAt.timeIntervalSince(now ?? n.createdAt).rounded(.down)
        let seconds = left.isFinite ? max(0, min(Double(maxTTLSeconds), left)) : 0
        return "\(Int64(seconds))s"
    }

    /// `AndroidConfig`: priority, ttl, collapse_key and, for alerts, the
    /// `AndroidNotification` (loc keys, sound, tag = collapse key so a newer
    /// notification replaces the shown one as `apns-collapse-id` does,
    /// click_action = category, notification_count = badge).
    static func android(for n: PushNotification, hasAlert: Bool, now: Date?) -> [(key: String, value: JSONValue)] {
        var android: [(key: String, value: JSONValue)] = [
            ("priority", .string(n.priority == .high ? "HIGH" : "NORMAL")),
        ]
        if let ttl = ttl(for: n, now: now) { android.append(("ttl", .string(ttl))) }
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

    /// `ApnsConfig` for topic/condition messages: the APNs headers and the
    /// `aps` dictionary APNsTranslator would send (FCM adds the data as
    /// custom keys), and the image as `fcm_options.image`.
    static func apnsConfig(for n: PushNotification) -> [(key: String, value: JSONValue)] {
        var headers: [(key: String, value: JSONValue)] = [
            ("apns-push-type", .string(APNsTranslator.pushType(for: n).rawValue)),
            ("apns-priority", .string(APNsTranslator.priority(for: n))),
        ]
        if let expiration = APNsTranslator.expiration(for: n) { headers.append(("apns-expiration", .string(expiration))) }
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
}
