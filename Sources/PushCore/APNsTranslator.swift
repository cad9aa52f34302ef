import Foundation

/// Translates notifications into APNs HTTP/2 requests
/// (`POST /3/device/<token>` with `apns-*` headers and an `aps` payload),
/// following Apple's "Sending notification requests to APNs" and
/// "Generating a remote notification".
public enum APNsTranslator {
    /// Apple's payload limit for regular remote notifications.
    public static let maxPayloadBytes = 4096
    /// Apple's payload limit for VoIP notifications.
    public static let maxVoIPPayloadBytes = 5120
    /// `apns-collapse-id` may be at most 64 bytes.
    public static let maxCollapseIDBytes = 64

    /// Whether `token` looks like an APNs device token: hexadecimal, even length, 64 to 200 characters.
    public static func isWellFormedToken(_ token: String) -> Bool {
        guard (64...200).contains(token.utf8.count), token.utf8.count % 2 == 0 else { return false }
        // Over the contiguous bytes: iterating `String.UTF8View` costs several times more per byte.
        var token = token
        return token.withUTF8 { utf8 in
            utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
        }
    }

    /// The push type: `apns.push_type` when given, else `alert` when something
    /// shows (alert, badge or sound), else `background`.
    public static func pushType(for n: PushNotification) -> APNsPushType {
        if let explicit = n.apns.pushType { return explicit }
        let visible = !(n.alert?.isEmpty ?? true) || n.badge != nil || n.sound != nil
        return visible ? .alert : .background
    }

    /// The `apns-topic`: `apns.topic` as given, else the app's topic with the
    /// suffix the push type requires (mdm: as given).
    public static func topic(for n: PushNotification, context: TranslationContext) -> String? {
        if let explicit = n.apns.topic, !explicit.isEmpty { return explicit }
        guard let base = context.apnsTopic, !base.isEmpty else { return nil }
        guard let suffix = pushType(for: n).topicSuffix, !base.hasSuffix(suffix) else { return base }
        return base + suffix
    }

    /// `apns-priority`: an explicit header wins; background is always 5 (10 is
    /// an error), pushtotalk always 10; else high/normal/low → 10/5/1, where 1
    /// (power first, never wake the device) is only used for alert pushes and
    /// other push types get 5.
    public static func priority(for n: PushNotification) -> String {
        if let explicit = n.apns.header("apns-priority") { return explicit }
        let type = pushType(for: n)
        switch type {
        case .background: return "5"
        case .pushtotalk: return "10"
        default: break
        }
        switch n.priority {
        case .high: return "10"
        case .normal: return "5"
        case .low: return type == .alert ? "1" : "5"
        }
    }

    /// `apns-expiration`: an explicit header wins; `0` (do not store) for
    /// `ttl_seconds: 0` and pushtotalk; else `providerDeadline` (the expiry,
    /// or 28 days after `created_at`) in UNIX seconds.
    ///
    /// Total for any `Date`: the seconds are clamped to 0 ... 9999-12-31T23:59:59Z
    /// (before 1970 is "0", as is NaN), never converted with a trap.
    public static func expiration(for n: PushNotification) -> String {
        if let explicit = n.apns.header("apns-expiration") { return explicit }
        guard pushType(for: n) != .pushtotalk, let deadline = n.providerDeadline else { return "0" }
        let seconds = deadline.timeIntervalSince1970.rounded(.down)
        guard seconds > 0 else { return "0" }  // also NaN
        return String(Int64(exactly: min(seconds, maxExpirationSeconds)) ?? 0)
    }

    /// 9999-12-31T23:59:59Z in UNIX seconds: the latest `apns-expiration` sent.
    static let maxExpirationSeconds: Double = 253_402_300_799

    /// The exact request for one device token, or why there can be none
    /// (malformed token, no topic, reserved key, payload too large, collapse id too long).
    public static func request(for n: PushNotification, token: String, context: TranslationContext) -> Result<ProviderRequest, TranslationError> {
        guard isWellFormedToken(token) else {
            return .failure(TranslationError(
                code: "BadDeviceToken", message: "APNs device token must be 64-200 hexadecimal characters",
                tokenIsInvalid: true))
        }
        guard let topic = topic(for: n, context: context) else {
            return .failure(TranslationError(code: "MissingTopic", message: "app \(n.app) has no APNs topic configured"))
        }
        if n.data.contains(where: { $0.key == "aps" }) {
            return .failure(TranslationError(code: "ReservedKey", message: "custom data must not use the key \"aps\""))
        }
        let type = pushType(for: n)
        let body = keptOrRenderedPayload(for: n)
        assert(n.apnsPayload == nil || body == payload(for: n), "the kept APNs payload is stale")
        guard body.count <= type.maxPayloadBytes else {
            return .failure(TranslationError(
                code: "PayloadTooLarge", message: "APNs payload is \(body.count) bytes, over Apple's \(type.maxPayloadBytes)-byte limit"))
        }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(6)  // these four, expiration and collapse id: no regrowth
        headers.append(("apns-push-type", type.rawValue))
        headers.append(("apns-topic", topic))
        headers.append(("apns-priority", priority(for: n)))
        headers.append(("apns-id", DeliveryIdentity.apnsID(notificationID: n.id, token: token)))
        headers.append(("apns-expiration", expiration(for: n)))
        if let collapseID = n.apns.header("apns-collapse-id") ?? n.collapseKey {
            guard collapseID.utf8.count <= maxCollapseIDBytes else {
                return .failure(TranslationError(code: "BadCollapseId", message: "apns-collapse-id is \(collapseID.utf8.count) bytes, over Apple's \(maxCollapseIDBytes)"))
            }
            headers.append(("apns-collapse-id", collapseID))
        }
        return .success(ProviderRequest(provider: .apns, path: "/3/device/\(token)", headers: headers, body: body))
    }
}
