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

    /// The endpoint's origin (`https://host[:port]`, lower-case host, port 443
    /// left out: RFC 6454 §6.1), the VAPID audience (RFC 8292 §2); or why the
    /// URL is no endpoint: it must be https with a host, and carry no
    /// userinfo, fragment or whitespace.
    public static func origin(of url: String) -> Result<String, EndpointProblem> {
        guard url.utf8.count <= maxBytes else { return .failure(.init("longer than \(maxBytes) bytes")) }
        guard !url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) else {
            return .failure(.init("contains whitespace or a control character"))
        }
        guard let components = URLComponents(string: url) else { return .failure(.init("not a URL")) }
        guard components.scheme?.lowercased() == "https" else { return .failure(.init("must use https")) }
        guard var host = components.host, !host.isEmpty else { return .failure(.init("has no host")) }
        guard components.user == nil, components.password == nil else { return .failure(.init("must not carry userinfo")) }
        guard components.fragment == nil else { return .failure(.init("must not have a fragment")) }
        host = host.lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }  // IPv6 literal
        var origin = "https://\(host)"
        if let port = components.port {
            guard (1...65535).contains(port) else { return .failure(.init("port \(port) out of range")) }
            if port != 443 { origin += ":\(port)" }
        }
        return .success(origin)
    }

    /// Why an endpoint was refused.
    public struct EndpointProblem: Error, Sendable, Equatable {
        public var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
