/// Base64url (RFC 4648 §5), the one implementation for every use: JWT parts
/// (RFC 7515 §2), Web Push subscription keys (RFC 8291), VAPID keys (RFC 8292)
/// and topics (RFC 8030 §5.4). Encoding writes no padding, as JWTs and VAPID
/// require. Decoding is strict: only the URL-safe alphabet, with optional
/// trailing `=` padding to a whole number of quanta, as browsers'
/// `PushSubscription` JSON carries keys.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 4 / 3 + 3)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((accumulator >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
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
