import Foundation

/// Translates notifications into Web Push requests (RFC 8030 §5) before
/// encryption: the endpoint, the `TTL`, `Urgency` and `Topic` headers, and the
/// plaintext the service worker receives (`WebPushNotificationPayload`).
/// The client in PushProviders encrypts the plaintext for the subscription's
/// keys (RFC 8291) and signs VAPID (RFC 8292) when it sends.
public enum WebPushTranslator {
    /// The longest plaintext one `aes128gcm` record of 4096 bytes holds:
    /// 4096 − 86 (header with a 65-byte key id) − 1 (delimiter) − 16 (tag).
    public static let maxPlaintextBytes = 3993
    /// The longest `TTL` sent: 28 days (push services may keep it shorter;
    /// FCM's Web Push caps at 4 weeks).
    public static let maxTTLSeconds: Int64 = 28 * 24 * 3600

    /// The request for one subscription, or why there can be none.
    public static func request(for n: PushNotification, recipient: Recipient, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        guard let keys = recipient.webKeys else {
            return .failure(TranslationError(
                code: "MissingSubscriptionKeys", message: "a web recipient needs its subscription's keys.p256dh and keys.auth",
                tokenIsInvalid: true))
        }
        if case .failure(let problem) = WebPushEndpointRules.origin(of: recipient.token) {
            return .failure(TranslationError(code: "InvalidEndpoint", message: "subscription endpoint \(problem.reason)", tokenIsInvalid: true))
        }
        if let problem = WebPushKeys.p256dhProblem(keys.p256dh) ?? WebPushKeys.authProblem(keys.auth) {
            return .failure(TranslationError(code: "InvalidSubscriptionKeys", message: problem, tokenIsInvalid: true))
        }
        let body = payload(for: n).encoded()
        guard body.count <= maxPlaintextBytes else {
            return .failure(TranslationError(
                code: "PayloadTooLarge",
                message: "Web Push payload is \(body.count) bytes, over the \(maxPlaintextBytes) bytes one 4096-byte encrypted record holds"))
        }
        var headers: [(name: String, value: String)] = [("ttl", String(ttl(for: n, now: now))), ("urgency", urgency(for: n))]
        if let key = n.collapseKey, !key.isEmpty { headers.append(("topic", topic(for: key))) }
        return .success(ProviderRequest(provider: .webpush, path: recipient.token, headers: headers, body: body, webKeys: keys))
    }

    /// What the service worker receives: id, title, body, image, tag (the
    /// collapse key), and the data with every value as a string (non-strings
    /// as their JSON text, as FCM takes them). A title or body that is absent
    /// or empty is left out, so a data-only notification carries no text.
    public static func payload(for n: PushNotification) -> WebPushNotificationPayload {
        var data: [String: String] = [:]
        for (key, value) in n.data {
            if case .string(let s) = value { data[key] = s } else { data[key] = String(decoding: value.encoded(), as: UTF8.self) }
        }
        let title = n.alert?.title, body = n.alert?.body
        return WebPushNotificationPayload(
            id: n.id.uuidString.lowercased(), title: title?.isEmpty == false ? title : nil,
            body: body?.isEmpty == false ? body : nil, image: n.imageURL, tag: n.collapseKey, data: data)
    }

    /// `TTL` in seconds: 0 for do-not-store, else the time left from `now`
    /// (or `createdAt`) until the expiry, or until 28 days after `createdAt`
    /// without one (`PushNotification.storageSeconds`), at most 28 days.
    public static func ttl(for n: PushNotification, now: Date?) -> Int64 {
        n.storageSeconds(now: now, cap: maxTTLSeconds)
    }

    /// `Urgency` (RFC 8030 §5.3) from the priority: high, normal, low.
    public static func urgency(for n: PushNotification) -> String {
        switch n.priority {
        case .high: "high"
        case .normal: "normal"
        case .low: "low"
        }
    }

    /// `Topic` (RFC 8030 §5.4) from the collapse key: the key itself when it
    /// is 1–32 base64url characters, else 32 hex digits of two FNV-1a hashes
    /// of it, stable across processes, so equal keys replace each other.
    public static func topic(for key: String) -> String {
        if key.utf8.count <= 32, Base64URL.isAlphabet(key) { return key }
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in key.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        func hex16(_ x: UInt64) -> String {
            let digits = String(UUIDText.splitmix64Finalizer(x), radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex16(a) + hex16(b)
    }
}
