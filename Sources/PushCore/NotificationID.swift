import Foundation

/// Notification ids for producers. Any UUID is a valid id; a time-ordered
/// one (RFC 9562 version 7) costs PostgreSQL less per notification, because
/// the id leads the primary keys of `notification_ids` and `deliveries`:
/// ids that grow with time land on the right-hand edge of those btrees,
/// in pages already in memory, where random (version 4) ids touch a random
/// leaf page per row, each logged whole after a checkpoint
/// (docs/benchmarks.md, "Time-ordered ids").
public enum NotificationID {
    /// A version 7 UUID for `date`: 48 bits of Unix milliseconds, then the
    /// version, 12 random bits, the RFC 4122 variant and 62 random bits.
    /// Ids made in the same millisecond are unordered among themselves;
    /// uniqueness rests on the 74 random bits, as for version 4's 122.
    /// A date before 1970 counts as 0 ms; one past 10889 (48 bits) wraps.
    public static func timeOrdered(at date: Date, using generator: inout some RandomNumberGenerator) -> UUID {
        let seconds = date.timeIntervalSince1970
        // Total for any Double: NaN and negatives give 0, huge values wrap in 48 bits.
        let milliseconds: UInt64 = seconds.isFinite && seconds > 0
            ? (UInt64(exactly: min(seconds * 1000, 0x1p63).rounded(.down)) ?? 0) & 0xFFFF_FFFF_FFFF
            : 0
        let random = generator.next()
        let high = milliseconds << 16 | 0x7000 | (random & 0x0FFF)
        let low = generator.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return UUID(uuid: (
            byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3),
            byte(high, 4), byte(high, 5), byte(high, 6), byte(high, 7),
            byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3),
            byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)))
    }

    /// A version 7 UUID for now, from the system's random generator.
    public static func timeOrdered() -> UUID {
        var generator = SystemRandomNumberGenerator()
        return timeOrdered(at: Date(), using: &generator)
    }

    /// The Unix milliseconds a version 7 UUID carries, or nil for any other version.
    public static func milliseconds(of id: UUID) -> UInt64? {
        let b = id.uuid
        guard b.6 >> 4 == 7, b.8 >> 6 == 0b10 else { return nil }
        return [b.0, b.1, b.2, b.3, b.4, b.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Byte `index` (0 is the most significant) of `word`.
    private static func byte(_ word: UInt64, _ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index)))
    }
}
