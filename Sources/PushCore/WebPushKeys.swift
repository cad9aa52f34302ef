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

/// Strict base64url (RFC 4648 §5): only the URL-safe alphabet, with optional
/// trailing `=` padding, as browsers' `PushSubscription` JSON carries keys.
public enum Base64URL {
    /// Decodes; nil on any character outside the alphabet, misplaced padding or an impossible length.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var input = Array(text.utf8)
        var padding = 0
        while input.last == UInt8(ascii: "=") {
            input.removeLast()
            padding += 1
        }
        guard padding <= 2, input.count % 4 != 1 else { return nil }
        if padding > 0, (input.count + padding) % 4 != 0 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }

    /// Whether every character is in the base64url alphabet (no padding).
    public static func isAlphabet(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { sextet($0) != nil }
    }

    static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
