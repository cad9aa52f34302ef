import Foundation

/// The keys of a browser's `PushSubscription` (`keys.p256dh`, `keys.auth`) as
/// its JSON carries them: base64url text. `WebPushKeys.problem` checks them at
/// intake (RFC 8291 §2.1, §3.2: a 65-byte uncompressed P-256 point and a
/// 16-byte authentication secret); that the point lies on the curve is checked
/// where the body is encrypted (PushProviders, with OpenSSL).
public struct WebPushKeys: Sendable, Hashable {
    /// The user agent's ECDH public key, base64url.
    public var p256dh: String
    /// The authentication secret, base64url.
    public var auth: String

    public init(p256dh: String, auth: String) {
        self.p256dh = p256dh
        self.auth = auth
    }

    /// Why `p256dh` cannot be a subscription's public key, or nil.
    public static func p256dhProblem(_ text: String) -> String? {
        guard let bytes = Base64URL.decode(text) else { return "must be base64url (A-Z a-z 0-9 - _, padding optional)" }
        guard bytes.count == 65, bytes[0] == 0x04 else {
            return "must be a 65-byte uncompressed P-256 point (0x04 first), got \(bytes.count) bytes"
        }
        return nil
    }

    /// Why `auth` cannot be a subscription's authentication secret, or nil.
    public static func authProblem(_ text: String) -> String? {
        guard let bytes = Base64URL.decode(text) else { return "must be base64url (A-Z a-z 0-9 - _, padding optional)" }
        guard bytes.count == 16 else { return "must be 16 bytes, got \(bytes.count)" }
        return nil
    }
}

/// Rules for a push subscription's endpoint (RFC 8030 §4).
public enum WebPushEndpointRules {
    /// The longest endpoint accepted (browsers' are 150–500 bytes).
    public static let maxBytes = 2048

    /// Why an endpoint was refused.
    public struct EndpointProblem: Error, Sendable, Equatable {
        public var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
