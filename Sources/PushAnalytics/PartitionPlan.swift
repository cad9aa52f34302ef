import Foundation
import PushCore

/// Which daily partitions of `deliveries` and `delivery_attempt_log` to create
/// and which to drop: pure, so the calendar arithmetic is tested without a server.
public struct PartitionPlan: Sendable, Equatable {
    /// The partitioned tables kept by day.
    public static let parents = ["deliveries", "delivery_attempt_log"]

    /// Days (UTC) whose partitions should exist: today through today + daysAhead.
    public var ensureDays: [PartitionDay]
    /// Existing partitions whose whole day ended before the retention cutoff.
    public var drop: [String]

    /// `existing` are partition table names (others, e.g. `deliveries_default`, are ignored).
    public init(existing: [String], now: Date, daysAhead: Int, retentionDays: Int) {
        let today = PartitionDay(containing: now)
        ensureDays = (0...max(0, daysAhead)).map { today.adding($0) }
        let cutoff = now.addingTimeInterval(-Double(retentionDays) * 86_400)
        drop = existing.filter { name in
            guard let (_, day) = PartitionDay.parse(partition: name) else { return false }
            return day.adding(1).start <= cutoff
        }.sorted()
    }
}

extension PartitionDay {
    /// The parent and day of a daily partition name such as `deliveries_20261121`.
    public static func parse(partition name: String) -> (parent: String, day: PartitionDay)? {
        for parent in PartitionPlan.parents {
            guard name.hasPrefix(parent + "_") else { continue }
            let suffix = name.dropFirst(parent.count + 1)
            guard suffix.count == 8, suffix.allSatisfy(\.isASCII), suffix.allSatisfy(\.isNumber),
                  let y = Int(suffix.prefix(4)), let m = Int(suffix.dropFirst(4).prefix(2)), let d = Int(suffix.suffix(2))
            else { continue }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
            guard let date = calendar.date(from: DateComponents(year: y, month: m, day: d)) else { continue }
            let day = PartitionDay(containing: date)
            guard day.suffix == String(suffix) else { continue }  // rejects 20261332 and the like
            return (parent, day)
        }
        return nil
    }
}
