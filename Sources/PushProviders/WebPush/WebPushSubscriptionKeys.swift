import PushCore

/// The keys of a browser's `PushSubscription` (`keys.p256dh`, `keys.auth`),
/// validated: a 65-byte uncompressed P-256 point on the curve, and a 16-byte
/// authentication secret (RFC 8291 §2.1, §3.2).
public struct WebPushSubscriptionKeys: Sendable, Equatable {
    /// The user agent's ECDH public key (`ua_public`), 65 bytes.
    public let p256dh: [UInt8]
    /// The authentication secret, 16 bytes.
    public let auth: [UInt8]
    /// `p256dh` as OpenSSL holds it, parsed once for validation and encryption.
    let publicKey: P256PublicKey

    /// From the base64url text of the subscription JSON.
    public init(p256dh: String, auth: String) throws(WebPushError) {
        guard let point = Base64URL.decode(p256dh) else {
            throw WebPushError.invalid(.invalidBase64URL, field: "keys.p256dh", "not base64url")
        }
        guard let secret = Base64URL.decode(auth) else {
            throw WebPushError.invalid(.invalidBase64URL, field: "keys.auth", "not base64url")
        }
        try self.init(p256dh: point, auth: secret)
    }

    /// From raw bytes.
    public init(p256dh: [UInt8], auth: [UInt8]) throws(WebPushError) {
        publicKey = try P256PublicKey(uncompressed: p256dh, field: "keys.p256dh")
        guard auth.count == 16 else {
            throw WebPushError.invalid(
                .invalidAuthSecret, field: "keys.auth", "expected 16 bytes, got \(auth.count)")
        }
        self.p256dh = p256dh
        self.auth = auth
    }

    public static func == (lhs: WebPushSubscriptionKeys, rhs: WebPushSubscriptionKeys) -> Bool {
        lhs.p256dh == rhs.p256dh && lhs.auth == rhs.auth
    }
}
