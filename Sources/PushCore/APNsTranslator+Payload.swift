import Foundation

extension APNsTranslator {
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
        var aps = ObjectWriter()
        if let alert = n.alert, !alert.isEmpty {
            aps.key("alert", into: &out)
            writeAlert(alert, into: &out)
        }
        if let badge = n.badge { aps.member("badge", .int(Int64(badge)), into: &out) }
        if let sound = n.sound { aps.member("sound", soundValue(sound), into: &out) }
        if let threadID = n.threadID { aps.member("thread-id", .string(threadID), into: &out) }
        if let category = n.category { aps.member("category", .string(category), into: &out) }
        if n.contentAvailable { aps.member("content-available", .int(1), into: &out) }
        if n.mutableContent { aps.member("mutable-content", .int(1), into: &out) }
        if let target = n.targetContentID { aps.member("target-content-id", .string(target), into: &out) }
        if let level = n.interruptionLevel { aps.member("interruption-level", .string(level.rawValue), into: &out) }
        if let score = n.relevanceScore { aps.member("relevance-score", .double(score), into: &out) }
        if type == .widgets { aps.member("content-changed", .bool(true), into: &out) }
        var payload = ObjectWriter()
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
        var fields = ObjectWriter()
        func add(_ key: String, _ value: String?) {
            if let value { fields.member(key, .string(value), into: &out) }
        }
        func add(_ key: String, _ values: [String]?) {
            guard let values else { return }
            fields.key(key, into: &out)
            out.append(UInt8(ascii: "["))
            for (i, value) in values.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(value, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
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
        out.append(UInt8(ascii: "}"))
    }

    /// Writes the members of one JSON object (its braces are the caller's), commas between.
    private struct ObjectWriter {
        var isEmpty = true

        /// `"key":`, after a comma unless it is the first member.
        mutating func key(_ key: String, into out: inout [UInt8]) {
            if !isEmpty { out.append(UInt8(ascii: ",")) }
            isEmpty = false
            JSONValue.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
        }

        mutating func member(_ key: String, _ value: JSONValue, into out: inout [UInt8]) {
            self.key(key, into: &out)
            value.write(into: &out)
        }
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
