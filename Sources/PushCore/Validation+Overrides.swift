import Foundation

extension FieldReader {
    static let apnsOverrideFields = ["push_type", "topic", "aps", "headers"]
    static let fcmOverrideFields = ["android", "webpush", "apns", "fcm_options"]

    /// `apns`: `{push_type, topic, aps, headers}`.
    mutating func apnsOverrides() -> APNsOverrides {
        guard let json = object("apns") else { return APNsOverrides() }
        var sub = nested("apns", json)
        var result = APNsOverrides()
        result.pushType = sub.oneOf("push_type", APNsPushType.self)
        result.topic = sub.headerText("topic", maxBytes: 255)
        result.aps = sub.object("aps")?.objectMembers ?? []
        // Header names exactly as the schema lists them (HTTP/2 names are lowercase):
        // "APNs-Priority" is not taken as apns-priority, so a name never arrives twice.
        for (name, value) in sub.stringMap("headers") {
            let path = "headers.\(name)"
            switch name {
            case "apns-priority":
                if !["10", "5", "1"].contains(value) { sub.fail(path, "must be \"10\", \"5\" or \"1\"") }
            case "apns-expiration":
                if value.isEmpty || !value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) || value.utf8.count > 12 {
                    sub.fail(path, "must be a UNIX time in seconds, or 0 (do not store)")
                }
            case "apns-collapse-id":
                if value.isEmpty || value.utf8.count > APNsTranslator.maxCollapseIDBytes {
                    sub.fail(path, "must be 1-\(APNsTranslator.maxCollapseIDBytes) bytes")
                } else if !FieldReader.isHeaderSafe(value) {
                    sub.fail(path, FieldReader.controlCharacterReason)
                }
            case "apns-topic": sub.fail(path, "set apns.topic instead")
            case "apns-push-type": sub.fail(path, "set apns.push_type instead")
            case "apns-id": sub.fail(path, "is derived from the notification id and device so retries reuse it")
            default: sub.fail(path, "not an APNs request header PushFleet lets you set (apns-priority, apns-expiration, apns-collapse-id, in lowercase)")
            }
            result.headers.append((name, value))
        }
        sub.rejectUnknown(allowed: Self.apnsOverrideFields)
        issues += sub.issues
        return result
    }

    /// `fcm`: raw `android`, `webpush`, `apns` and `fcm_options` blocks,
    /// type-checked where the FCM v1 reference fixes a format.
    mutating func fcmOverrides() -> FCMOverrides {
        guard let json = object("fcm") else { return FCMOverrides() }
        var sub = nested("fcm", json)
        var result = FCMOverrides()
        if let android = sub.object("android") {
            var a = sub.nested("android", android)
            a.androidConfig()
            sub.issues += a.issues
            result.android = android.objectMembers ?? []
        }
        if let webpush = sub.object("webpush") {
            var w = sub.nested("webpush", webpush)
            _ = w.stringMap("headers")
            w.fcmDataMap("data")
            _ = w.object("notification")
            if let options = w.object("fcm_options") {
                var o = w.nested("fcm_options", options)
                if o.has("link") { _ = o.url("link") }
                o.analyticsLabel()
                w.issues += o.issues
            }
            sub.issues += w.issues
            result.webpush = webpush.objectMembers ?? []
        }
        if let apns = sub.object("apns") {
            var a = sub.nested("apns", apns)
            _ = a.stringMap("headers")
            _ = a.object("payload")
            _ = a.object("fcm_options")
            sub.issues += a.issues
            result.apns = apns.objectMembers ?? []
        }
        if let options = sub.object("fcm_options") {
            var o = sub.nested("fcm_options", options)
            o.analyticsLabel()
            sub.issues += o.issues
            result.fcmOptions = options.objectMembers ?? []
        }
        sub.rejectUnknown(allowed: Self.fcmOverrideFields)
        issues += sub.issues
        return result
    }

    /// An object whose values must all be strings (FCM `map<string, string>`).
    mutating func stringMap(_ field: String) -> [(key: String, value: String)] {
        guard let json = object(field), case .object(let members) = json else { return [] }
        var result: [(key: String, value: String)] = []
        for member in members {
            guard case .string(let s) = member.value else { fail("\(field).\(member.key)", "must be a string", .wrongType); continue }
            result.append((member.key, s))
        }
        return result
    }

    /// `AndroidConfig` fields with a fixed format; other keys pass through to FCM.
    mutating func androidConfig() {
        if let p = string("priority"), !["NORMAL", "HIGH"].contains(p) { fail("priority", "must be NORMAL or HIGH") }
        if let ttl = string("ttl") {
            switch FCMTranslator.checkTTL(ttl) {
            case .valid: break
            case .tooLong: fail("ttl", "longer than FCM's 28-day maximum", .numberOutOfRange)
            case .malformed: fail("ttl", "must be a duration in seconds with at most 9 fraction digits, such as \"3600s\" or \"3.5s\"")
            }
        }
        _ = string("collapse_key")
        _ = string("restricted_package_name")
        fcmDataMap("data")
        _ = bool("direct_boot_ok")
        if let options = object("fcm_options") {
            var o = nested("fcm_options", options)
            o.analyticsLabel()
            issues += o.issues
        }
        guard let notification = object("notification") else { return }
        var n = nested("notification", notification)
        for key in ["title", "body", "icon", "sound", "tag", "click_action", "channel_id", "ticker", "image", "title_loc_key", "body_loc_key"] {
            _ = n.string(key)
        }
        _ = n.stringArray("title_loc_args")
        _ = n.stringArray("body_loc_args")
        if let color = n.string("color"), !FCMTranslator.isColor(color) { n.fail("color", "must be #rrggbb") }
        _ = n.int("notification_count", in: IntakeLimits.badgeRange)
        if let v = n.string("visibility"), !["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"].contains(v) {
            n.fail("visibility", "must be PRIVATE, PUBLIC or SECRET")
        }
        if let p = n.string("notification_priority"),
           !["PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"].contains(p) {
            n.fail("notification_priority", "must be one of PRIORITY_MIN, PRIORITY_LOW, PRIORITY_DEFAULT, PRIORITY_HIGH, PRIORITY_MAX")
        }
        for key in ["sticky", "local_only", "default_sound", "default_vibrate_timings", "default_light_settings"] {
            _ = n.bool(key)
        }
        issues += n.issues
    }

    /// A data map that reaches FCM (`fcm.android.data`, `fcm.webpush.data`, each
    /// replacing the top-level `data` on its platform): string values, and none
    /// of the keys FCM reserves (`FCMTranslator.isReservedDataKey`), which it
    /// refuses with 400 INVALID_ARGUMENT. The same rule as top-level `data`.
    mutating func fcmDataMap(_ field: String) {
        for (key, _) in stringMap(field) where FCMTranslator.isReservedDataKey(key) {
            fail("\(field).\(key)", "reserved by FCM (\(FCMTranslator.reservedDataKeysText))")
        }
    }

    /// FCM `analytics_label`: `^[a-zA-Z0-9-_.~%]{1,50}$`.
    mutating func analyticsLabel() {
        guard let label = string("analytics_label") else { return }
        if !FCMTranslator.isValidAnalyticsLabel(label) {
            fail("analytics_label", "must match [a-zA-Z0-9-_.~%]{1,\(FCMTranslator.maxAnalyticsLabelBytes)}")
        }
    }
}
