import Foundation

extension APNsTranslator {
    /// The exact payload bytes: `{"aps":{…}}` followed by the custom data.
    /// An `mdm` push with nothing for `aps` is the custom data alone
    /// (`{"mdm":"<PushMagic>"}`), as the MDM protocol defines it.
    public static func payload(for n: PushNotification) -> [UInt8] {
        let type = pushType(for: n)
        let aps = apsMembers(for: n, type: type)
        var payload: [(key: String, value: JSONValue)] = []
        payload.reserveCapacity(n.data.count + 1)
        if !(aps.isEmpty && type == .mdm) { payload.append(("aps", .object(aps))) }
        payload.append(contentsOf: n.data)
        var out: [UInt8] = []
        out.reserveCapacity(512)
        JSONValue.object(payload).write(into: &out)
        return out
    }

    /// The `aps` dictionary in Apple's key order, with `apns.aps` merged in
    /// (a key present in both is replaced in place).
    static func apsMembers(for n: PushNotification, type: APNsPushType) -> [(key: String, value: JSONValue)] {
        var aps: [(key: String, value: JSONValue)] = []
        if let alert = n.alert, !alert.isEmpty { aps.append(("alert", .object(alertMembers(alert)))) }
        if let badge = n.badge { aps.append(("badge", .int(Int64(badge)))) }
        if let sound = n.sound { aps.append(("sound", soundValue(sound))) }
        if let threadID = n.threadID { aps.append(("thread-id", .string(threadID))) }
        if let category = n.category { aps.append(("category", .string(category))) }
        if n.contentAvailable { aps.append(("content-available", .int(1))) }
        if n.mutableContent { aps.append(("mutable-content", .int(1))) }
        if let target = n.targetContentID { aps.append(("target-content-id", .string(target))) }
        if let level = n.interruptionLevel { aps.append(("interruption-level", .string(level.rawValue))) }
        if let score = n.relevanceScore { aps.append(("relevance-score", .double(score))) }
        if type == .widgets, !n.apns.aps.contains(where: { $0.key == "content-changed" }) {
            aps.append(("content-changed", .bool(true)))
        }
        return JSONValue.merge(aps, n.apns.aps)
    }

    /// `aps.alert` with Apple's key names.
    static func alertMembers(_ alert: PushNotification.Alert) -> [(key: String, value: JSONValue)] {
        var fields: [(key: String, value: JSONValue)] = []
        func add(_ key: String, _ value: String?) { if let value { fields.append((key, .string(value))) } }
        func add(_ key: String, _ values: [String]?) { if let values { fields.append((key, .array(values.map(JSONValue.string)))) } }
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
        return fields
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
