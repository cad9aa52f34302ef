/// UUID text built from two 64-bit halves, for ids derived or generated
/// without Foundation's `UUID` (the delivery `apns-id`, the simulator's ids).
public enum UUIDText {
    /// Lowercase 8-4-4-4-12 hex of `high` then `low`, most significant byte first.
    public static func lowercase(high: UInt64, low: UInt64) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { out in
            digits.withUTF8Buffer { hex in
                var position = 0
                func put(_ word: UInt64) {
                    for i in 0..<8 {
                        if position == 8 || position == 13 || position == 18 || position == 23 {
                            out[position] = UInt8(ascii: "-")
                            position += 1
                        }
                        let byte = UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(i)))
                        out[position] = hex[Int(byte >> 4)]
                        out[position + 1] = hex[Int(byte & 0x0F)]
                        position += 2
                    }
                }
                put(high)
                put(low)
            }
            return 36
        }
    }

    /// splitmix64's finaliser: a bijection that spreads similar inputs over all bits.
    public static func splitmix64Finalizer(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 30
        hash &*= 0xbf58_476d_1ce4_e5b9
        hash ^= hash >> 27
        hash &*= 0x94d0_49bb_1331_11eb
        hash ^= hash >> 31
        return hash
    }
}
