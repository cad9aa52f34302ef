/// Strict base64url (RFC 4648 §5) for subscription keys: only the URL-safe
/// alphabet, with optional trailing `=` padding, as browsers' `PushSubscription`
/// JSON carries it. (`JWT.decodeBase64URL` is lenient; keys must not be.)
public enum WebPushBase64URL {
    /// Encodes without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        JWT.base64URL(bytes)
    }

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

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// Whether every character is in the base64url alphabet (no padding).
    static func isAlphabet(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { sextet($0) != nil }
    }
}
