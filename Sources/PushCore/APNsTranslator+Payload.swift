import Foundation

extension APNsTranslator {
    /// The payload decode rendered and kept (`apnsPayload`), while it is still
    /// this notification's; else the payload rendered now.
    static func keptOrRenderedPayload(for n: PushNotification) -> [UInt8] {
        n.apnsPayload ?? payload(for: n)
    }

    /// The exact payload bytes: `{"aps":{…}}` followed by the custom data.
    /// An `mdm` push with nothing for `aps` is the custom data alone
    /// (`{"mdm":"<PushMagic>"}`), as the MDM protocol defines it.
    public static func payload(for n: PushNotification) -> [UInt8] {
        let type = pushType(for: n)
        var out: [UInt8] = []
        out.reserveCapacity(estimatedPayloadBytes(for: n))
        guard n.apns.aps.isEmpty else {
            // `apns.aps` overrides are deep-merged into the generated members: build the tree.
            let aps = apsMembers(for: n, type: type)
            var payload: [(key: String, value: JSONValue)] = []
            payload.reserveCapacity(n.data.count + 1)
            if !(aps.isEmpty && type == .mdm) { payload.append(("aps", .object(aps))) }
            payload.append(contentsOf: n.data)
            JSONValue.object(payload).write(into: &out)
            return out
        }
        // Nothing to merge (the common case): the same bytes, written straight out.
        out.append(UInt8(ascii: "{"))
        let apsStart = out.count
        out.append(contentsOf: #""aps":{"#.utf8)
        var aps = JSONValue.ObjectWriter()
        forEachApsMember(of: n, type: type) { key, member in
            switch member {
            case .alert(let alert):
                aps.key(key, into: &out)
                writeAlert(alert, into: &out)
            case .value(let value):
                aps.member(key, value, into: &out)
            }
        }
        var payload = JSONValue.ObjectWriter()
        if aps.isEmpty && type == .mdm {
            out.removeSubrange(apsStart...)
        } else {
            out.append(UInt8(ascii: "}"))
            payload.isEmpty = false
        }
        for member in n.data { payload.member(member.key, member.value, into: &out) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Enough for the payload's usual shape (keys, punctuation and the
    /// notification's own strings) so it is written without regrowing.
    static func estimatedPayloadBytes(for n: PushNotification) -> Int {
        var bytes = 96
        if let alert = n.alert {
            bytes += 48 + (alert.title?.utf8.count ?? 0) + (alert.subtitle?.utf8.count ?? 0) + (alert.body?.utf8.count ?? 0)
        }
        bytes += (n.threadID?.utf8.count ?? 0) + (n.category?.utf8.count ?? 0) + (n.targetContentID?.utf8.count ?? 0)
        for member in n.data {
            bytes += 6 + member.key.utf8.count
            if case .string(let s) = member.value { bytes += s.utf8.count } else { bytes += 32 }
        }
        return bytes
    }

    /// `aps.alert` as `alertMembers` lists it, written straight out.
    private static func writeAlert(_ alert: PushNotification.Alert, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var fields = JSONValue.ObjectWriter()
        forEachAlertField(of: alert) { key, field in
            fields.key(key, into: &out)
            switch field {
            case .string(let value):
                JSONValue.writeString(value, into: &out)
            case .strings(let values):
                out.append(UInt8(ascii: "["))
                for (i, value) in values.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    JSONValue.writeString(value, into: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The `aps` dictionary in Apple's key order, with `apns.aps` merged in
    /// (a key present in both is replaced in place).
    static func apsMembers(for n: PushNotification, type: APNsPushType) -> [(key: String, value: JSONValue)] {
        var aps: [(key: String, value: JSONValue)] = []
        forEachApsMember(of: n, type: type) { key, member in
            switch member {
            case .alert(let alert): aps.append((key, .object(alertMembers(alert))))
            case .value(let value): aps.append((key, value))
            }
        }
        return JSONValue.merge(aps, n.apns.aps)
    }

    /// A generated `aps` member: the alert (written or built by the caller) or a value.
    enum ApsMember {
        case alert(PushNotification.Alert)
        case value(JSONValue)
    }

    /// The generated `aps` members in Apple's key order, before any `apns.aps`
    /// merge: the one list both the tree and the direct writer follow.
    static func forEachApsMember(of n: PushNotification, type: APNsPushType, _ body: (String, ApsMember) -> Void) {
        if let alert = n.alert, !alert.isEmpty { body("alert", .alert(alert)) }
        if let badge = n.badge { body("badge", .value(.int(Int64(badge)))) }
        if let sound = n.sound { body("sound", .value(soundValue(sound))) }
        if let threadID = n.threadID { body("thread-id", .value(.string(threadID))) }
        if let category = n.category { body("category", .value(.string(category))) }
        // A background push wakes the app only with content-available: 1. Apple
        // accepts one without it (and it does nothing), so every background
        // push carries it, asked for (content_available) or inferred (data only).
        if n.contentAvailable || type == .background { body("content-available", .value(.int(1))) }
        if n.mutableContent { body("mutable-content", .value(.int(1))) }
        if let target = n.targetContentID { body("target-content-id", .value(.string(target))) }
        if let level = n.interruptionLevel { body("interruption-level", .value(.string(level.rawValue))) }
        if let score = n.relevanceScore { body("relevance-score", .value(.double(score))) }
        if type == .widgets, !n.apns.aps.contains(where: { $0.key == "content-changed" }) {
            body("content-changed", .value(.bool(true)))
        }
    }

    /// `aps.alert` with Apple's key names.
    static func alertMembers(_ alert: PushNotification.Alert) -> [(key: String, value: JSONValue)] {
        var fields: [(key: String, value: JSONValue)] = []
        forEachAlertField(of: alert) { key, field in
            switch field {
            case .string(let value): fields.append((key, .string(value)))
            case .strings(let values): fields.append((key, .array(values.map(JSONValue.string))))
            }
        }
        return fields
    }

    /// An alert field's value: one string or a list of them.
    enum AlertField {
        case string(String)
        case strings([String])
    }

    /// The alert's fields present, with Apple's key names, in order.
    static func forEachAlertField(of alert: PushNotification.Alert, _ body: (String, AlertField) -> Void) {
        func add(_ key: String, _ value: String?) { if let value { body(key, .string(value)) } }
        func add(_ key: String, _ values: [String]?) { if let values { body(key, .strings(values)) } }
        add("title", alert.title)
        add("subtitle", alert.subtitle)
        add("body", alert.body)
        add("launch-image", alert.launchImage)
        add("title-loc-key", alert.titleLocKey)
        add("title-loc-args", alert.titleLocArgs)
        add("subtitle-loc-key", alert.subtitleLocKey)
        add("subtitle-loc-args", alert.subtitleLocArgs)
        add("loc-key", alert.bodyLocKey)
        add("loc-args", alert.bodyLocArgs)
    }

    /// A name, or `{"critical":1,"name":…,"volume":…}`.
    static func soundValue(_ sound: PushNotification.Sound) -> JSONValue {
        guard sound.needsDictionary else { return .string(sound.name) }
        var fields: [(key: String, value: JSONValue)] = []
        if sound.critical { fields.append(("critical", .int(1))) }
        fields.append(("name", .string(sound.name)))
        if let volume = sound.volume { fields.append(("volume", .double(volume))) }
        return .object(fields)
    }
}
