import Foundation

/// Translates notifications into APNs HTTP/2 requests
/// (`POST /3/device/<token>` with `apns-*` headers and an `aps` payload).
public enum APNsTranslator {
    /// Apple's payload limit for regular remote notifications.
    public static let maxPayloadBytes = 4096

    /// Whether `token` looks like an APNs device token: hexadecimal, even length, 64 to 200 characters.
    public static func isWellFormedToken(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard (64...200).contains(utf8.count), utf8.count % 2 == 0 else { return false }
        return utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
    }

    public static func request(for n: PushNotification, token: String, context: TranslationContext) -> Result<ProviderRequest, TranslationError> {
        guard isWellFormedToken(token) else {
            return .failure(TranslationError(
                code: "BadDeviceToken", message: "APNs device token must be 64-200 hexadecimal characters",
                tokenIsInvalid: true))
        }
        guard let topic = context.apnsTopic, !topic.isEmpty else {
            return .failure(TranslationError(code: "MissingTopic", message: "app \(n.app) has no APNs topic configured"))
        }
        if n.data.contains(where: { $0.key == "aps" }) {
            return .failure(TranslationError(code: "ReservedKey", message: "custom data must not use the key \"aps\""))
        }
        let isBackground = (n.alert?.isEmpty ?? true) && n.badge == nil && n.sound == nil
        var aps: [(key: String, value: JSONValue)] = []
        if let alert = n.alert, !alert.isEmpty {
            var fields: [(key: String, value: JSONValue)] = []
            if let title = alert.title { fields.append(("title", .string(title))) }
            if let body = alert.body { fields.append(("body", .string(body))) }
            aps.append(("alert", .object(fields)))
        }
        if let badge = n.badge { aps.append(("badge", .int(Int64(badge)))) }
        if let sound = n.sound { aps.append(("sound", .string(sound))) }
        if n.contentAvailable { aps.append(("content-available", .int(1))) }
        var payload: [(key: String, value: JSONValue)] = [("aps", .object(aps))]
        payload.append(contentsOf: n.data)
        let body = JSONValue.object(payload).encoded()
        guard body.count <= maxPayloadBytes else {
            return .failure(TranslationError(
                code: "PayloadTooLarge", message: "APNs payload is \(body.count) bytes, over Apple's \(maxPayloadBytes)-byte limit"))
        }

        var headers: [(name: String, value: String)] = [
            ("apns-push-type", isBackground ? "background" : "alert"),
            ("apns-topic", topic),
            ("apns-priority", priority(n.priority, background: isBackground)),
            ("apns-id", DeliveryIdentity.apnsID(notificationID: n.id, token: token)),
        ]
        if let expiresAt = n.expiresAt {
            headers.append(("apns-expiration", String(Int64(expiresAt.timeIntervalSince1970.rounded(.down)))))
        }
        if let collapseKey = n.collapseKey {
            headers.append(("apns-collapse-id", collapseKey))
        }
        return .success(ProviderRequest(provider: .apns, path: "/3/device/\(token)", headers: headers, body: body))
    }

    /// Apple: 10 = immediately, 5 = power-considerate, 1 = prioritise power; background pushes must use 5.
    static func priority(_ p: PushNotification.Priority, background: Bool) -> String {
        if background { return "5" }
        switch p {
        case .high: return "10"
        case .normal: return "5"
        case .low: return "1"
        }
    }
}
