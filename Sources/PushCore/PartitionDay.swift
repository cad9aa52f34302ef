import Foundation

/// A calendar day in UTC, as days since 1970-01-01.
public struct PartitionDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var daysSinceEpoch: Int64

    public init(daysSinceEpoch: Int64) { self.daysSinceEpoch = daysSinceEpoch }

    /// The day holding `date`. Total: a date beyond years 0001...9999 (only
    /// reachable from code, intake bounds `created_at`) is clamped to them, and
    /// a NaN date is day 0, so no conversion traps.
    public init(containing date: Date) {
        let seconds = min(max(date.timeIntervalSince1970, -62_135_596_800), 253_402_300_799)
        daysSinceEpoch = Int64(exactly: (seconds / 86_400).rounded(.down)) ?? 0
    }

    public var start: Date { Date(timeIntervalSince1970: TimeInterval(daysSinceEpoch * 86_400)) }
    public func adding(_ days: Int) -> PartitionDay { PartitionDay(daysSinceEpoch: daysSinceEpoch + Int64(days)) }

    /// `YYYYMMDD`, the suffix `pushfleet_ensure_partitions()` gives its partitions.
    public var suffix: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: start)
        return String(format: "%04d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        let s = suffix
        return "\(s.prefix(4))-\(s.dropFirst(4).prefix(2))-\(s.suffix(2))"
    }

    public static func < (a: PartitionDay, b: PartitionDay) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }
}
