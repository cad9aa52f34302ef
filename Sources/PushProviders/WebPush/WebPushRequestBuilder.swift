import PushCore
import PushHTTP

/// How urgently the user agent should be woken (RFC 8030 §5.3 `Urgency`).
public enum WebPushUrgency: String, Sendable, CaseIterable {
    case veryLow = "very-low"
    case low
    case normal
    case high
}

/// A browser's push subscription: where to POST and how to encrypt for it.
public struct WebPushSubscription: Sendable, Equatable {
    public let endpoint: WebPushEndpoint
    public let keys: WebPushSubscriptionKeys

    public init(endpoint: WebPushEndpoint, keys: WebPushSubscriptionKeys) {
        self.endpoint = endpoint
        self.keys = keys
    }

    /// From the `PushSubscription` JSON fields (`endpoint`, `keys.p256dh`, `keys.auth`), validated.
    public init(endpoint: String, p256dh: String, auth: String) throws(WebPushError) {
        self.endpoint = try WebPushEndpoint(endpoint)
        self.keys = try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth)
    }
}

/// One push message request (RFC 8030 §5), ready for `HTTP2Client`.
public struct WebPushRequest: Sendable {
    public var method: String
    /// The subscription's endpoint.
    public var url: String
    /// Lower-case names, in the order sent.
    public var headers: [(name: String, value: String)]
    /// The `aes128gcm` body.
    public var body: [UInt8]

    /// The value of the first header with this lower-case name.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.name == name })?.value
    }

    public var httpRequest: HTTPRequest {
        HTTPRequest(method: method, url: url, headers: headers, body: body)
    }
}

/// Builds push message requests: encrypts the payload (RFC 8291), signs VAPID
/// (RFC 8292) and sets RFC 8030's headers:
/// `TTL` (§5.2, required), `Urgency` (§5.3), `Topic` (§5.4, optional),
/// `Content-Encoding: aes128gcm`, `Content-Type: application/octet-stream`,
/// `Authorization: vapid t=…, k=…`.
public struct WebPushRequestBuilder: Sendable {
    /// The longest `Topic` (RFC 8030 §5.4).
    public static let maxTopicLength = 32

    public let vapid: VAPIDSigner

    public init(vapid: VAPIDSigner) {
        self.vapid = vapid
    }

    /// The request for one message.
    /// - Parameters:
    ///   - payload: the bytes the service worker receives (`WebPushNotificationPayload.encoded()`), ≤ 3993 bytes with padding.
    ///   - ttl: seconds the push service keeps the message for an offline user agent (≥ 0; 0 = deliver now or drop).
    ///   - topic: replaces an undelivered message with the same topic: 1–32 base64url characters.
    ///   - padding: zero bytes added inside the encryption to hide the length.
    /// - Throws: `WebPushError` naming the bad input (`ttl`, `topic`, `plaintext`) or a crypto failure.
    public func request(
        to subscription: WebPushSubscription, payload: [UInt8], ttl: Int, urgency: WebPushUrgency = .normal,
        topic: String? = nil, padding: Int = 0
    ) throws(WebPushError) -> WebPushRequest {
        try request(
            to: subscription, payload: payload, ttl: ttl, urgency: urgency, topic: topic, padding: padding,
            ephemeralKey: nil, salt: nil)
    }

    /// As `request(to:…)`, with a given ephemeral key and salt (tests only).
    public func request(
        to subscription: WebPushSubscription, payload: [UInt8], ttl: Int, urgency: WebPushUrgency = .normal,
        topic: String? = nil, padding: Int = 0, ephemeralKey: WebPushECDHKey?, salt: [UInt8]?
    ) throws(WebPushError) -> WebPushRequest {
        guard ttl >= 0 else { throw WebPushError.invalid(.invalidTTL, field: "ttl", "must be ≥ 0, got \(ttl)") }
        if let topic { try Self.validate(topic: topic) }
        let body: [UInt8]
        if let ephemeralKey, let salt {
            body = try WebPushEncryption.encrypt(
                payload, for: subscription.keys, padding: padding, ephemeralKey: ephemeralKey, salt: salt)
        } else {
            body = try WebPushEncryption.encrypt(payload, for: subscription.keys, padding: padding)
        }
        var headers: [(name: String, value: String)] = [
            ("ttl", String(ttl)), ("urgency", urgency.rawValue),
        ]
        if let topic { headers.append(("topic", topic)) }
        headers.append(("content-encoding", "aes128gcm"))
        headers.append(("content-type", "application/octet-stream"))
        headers.append(("authorization", try vapid.authorization(audience: subscription.endpoint.origin)))
        return WebPushRequest(method: "POST", url: subscription.endpoint.url, headers: headers, body: body)
    }

    /// 1–32 characters of the base64url alphabet (RFC 8030 §5.4).
    public static func validate(topic: String) throws(WebPushError) {
        guard !topic.isEmpty, topic.utf8.count <= maxTopicLength, Base64URL.isAlphabet(topic) else {
            throw WebPushError.invalid(
                .invalidTopic, field: "topic", "must be 1–32 characters of A–Z a–z 0–9 - _, got \"\(topic)\"")
        }
    }
}
