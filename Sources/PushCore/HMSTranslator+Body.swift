import Foundation

extension HMSTranslator {
    /// The exact request body for `message`, or why there is none.
    /// Key order is fixed, so equal messages give equal bytes.
    public static func body(for message: Message) throws(Failure) -> [UInt8] {
        guard !message.token.isEmpty else { throw .emptyToken }
        if let ttl = message.ttlSeconds, ttl < 0 { throw .negativeTTL }
        guard let isNotification = message.isNotification else { throw .incompleteNotification }
        let click = try clickActionValue(message.clickAction)

        // The message's members without the token: what the 4096-byte rule measures.
        var members: [UInt8] = []
        members.reserveCapacity(256 + message.data.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count })
        var writer = JSONValue.ObjectWriter()
        if !message.data.isEmpty {
            let object = JSONValue.object(message.data.map { ($0.key, .string($0.value)) }).encoded()
            writer.member("data", .string(String(decoding: object, as: UTF8.self)), into: &members)
        }
        if isNotification {
            writer.object("notification", into: &members) { fields, out in
                for (key, value) in [("title", message.title), ("body", message.body), ("image", message.image)] {
                    if let value, !value.isEmpty { fields.member(key, .string(value), into: &out) }
                }
            }
        }
        writer.object("android", into: &members) { android, out in
            if let key = message.collapseKey, !key.isEmpty {
                android.member("collapse_key", .int(Int64(collapseKey(for: key))), into: &out)
            }
            android.member("urgency", .string(message.urgency.rawValue), into: &out)
            if let category = message.category, !category.isEmpty { android.member("category", .string(category), into: &out) }
            if let ttl = message.ttlSeconds {
                android.member("ttl", .string("\(max(minTTLSeconds, min(ttl, maxTTLSeconds)))s"), into: &out)
            }
            if let tag = message.biTag, !tag.isEmpty { android.member("bi_tag", .string(tag), into: &out) }
            if isNotification {
                android.object("notification", into: &out) { notification, out in
                    notification.member("click_action", click, into: &out)
                }
            }
        }
        let measured = members.count + 2  // with the braces
        guard measured <= maxMessageBytes else { throw .tooLarge(bytes: measured) }

        var out: [UInt8] = []
        out.reserveCapacity(members.count + message.token.utf8.count + 48)
        out.append(contentsOf: #"{"validate_only":false,"message":{"#.utf8)
        out.append(contentsOf: members)
        writer.member("token", .array([.string(message.token)]), into: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// The `click_action` object: type 3 opens the app, 2 an https URL, 1 an intent or action.
    static func clickActionValue(_ action: ClickAction) throws(Failure) -> JSONValue {
        switch action {
        case .openApp:
            return .object([("type", .int(3))])
        case .url(let url):
            guard url.lowercased().hasPrefix("https://"), url.utf8.count > 8 else { throw .invalidClickAction }
            return .object([("type", .int(2)), ("url", .string(url))])
        case .intent(let intent):
            guard !intent.isEmpty else { throw .invalidClickAction }
            return .object([("type", .int(1)), ("intent", .string(intent))])
        case .action(let name):
            guard !name.isEmpty else { throw .invalidClickAction }
            return .object([("type", .int(1)), ("action", .string(name))])
        }
    }
}
