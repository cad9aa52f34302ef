import Foundation

/// Translates notifications into FCM HTTP v1 requests
/// (`POST /v1/projects/<project>/messages:send` with a `message` body).
public enum FCMTranslator {
    /// FCM's limit on the message payload.
    public static let maxMessageBytes = 4096
    /// Android TTL cap: 28 days.
    public static let maxTTLSeconds: Int64 = 28 * 24 * 3600

    /// Whether `token` looks like an FCM registration token.
    public static func isWellFormedToken(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard (20...4096).contains(utf8.count) else { return false }
        return utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ":")
        }
    }

    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google.") || key.hasPrefix("gcm.")
    }

    public static func request(for n: PushNotification, token: String, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        guard isWellFormedToken(token) else {
            return .failure(TranslationError(
                code: "INVALID_ARGUMENT", message: "FCM registration token must be 20-4096 characters of [A-Za-z0-9_:-]",
                tokenIsInvalid: true))
        }
        guard let project = context.fcmProjectID, !project.isEmpty else {
            return .failure(TranslationError(code: "MissingProject", message: "app \(n.app) has no FCM project configured"))
        }
        var message: [(key: String, value: JSONValue)] = [("token", .string(token))]
        if let alert = n.alert, !alert.isEmpty {
            var fields: [(key: String, value: JSONValue)] = []
            if let title = alert.title { fields.append(("title", .string(title))) }
            if let body = alert.body { fields.append(("body", .string(body))) }
            message.append(("notification", .object(fields)))
        }
        if !n.data.isEmpty {
            var data: [(key: String, value: JSONValue)] = []
            for (key, value) in n.data {
                if isReservedDataKey(key) {
                    return .failure(TranslationError(code: "ReservedKey", message: "FCM reserves the data key \"\(key)\""))
                }
                switch value {
                case .string(let s): data.append((key, .string(s)))
                default: data.append((key, .string(String(decoding: value.encoded(), as: UTF8.self))))
                }
            }
            message.append(("data", .object(data)))
        }
        var android: [(key: String, value: JSONValue)] = [
            ("priority", .string(n.priority == .high ? "HIGH" : "NORMAL")),
        ]
        if let expiresAt = n.expiresAt {
            let reference = now ?? n.createdAt
            let ttl = max(0, min(maxTTLSeconds, Int64(expiresAt.timeIntervalSince(reference).rounded(.down))))
            android.append(("ttl", .string("\(ttl)s")))
        }
        if let collapseKey = n.collapseKey { android.append(("collapse_key", .string(collapseKey))) }
        var androidNotification: [(key: String, value: JSONValue)] = []
        if let sound = n.sound { androidNotification.append(("sound", .string(sound))) }
        if let badge = n.badge { androidNotification.append(("notification_count", .int(Int64(badge)))) }
        if !androidNotification.isEmpty, message.contains(where: { $0.key == "notification" }) {
            android.append(("notification", .object(androidNotification)))
        }
        message.append(("android", .object(android)))

        let messageJSON = JSONValue.object(message)
        let messageBytes = messageJSON.encoded()
        guard messageBytes.count <= maxMessageBytes else {
            return .failure(TranslationError(
                code: "PayloadTooLarge", message: "FCM message is \(messageBytes.count) bytes, over the \(maxMessageBytes)-byte limit"))
        }
        var body: [UInt8] = Array(#"{"message":"#.utf8)
        body.append(contentsOf: messageBytes)
        body.append(UInt8(ascii: "}"))
        return .success(ProviderRequest(
            provider: .fcm, path: "/v1/projects/\(project)/messages:send",
            headers: [("content-type", "application/json; charset=utf-8")], body: body))
    }
}
