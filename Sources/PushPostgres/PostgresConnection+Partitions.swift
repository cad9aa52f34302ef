import Foundation
import PushCore

extension PostgresConnection {
    /// Creates the daily partitions of the ledger tables for `days` days from
    /// `first` that do not exist yet (`pushfleet_ensure_partitions`, from the
    /// migrations). A day whose rows already sit in the default partition
    /// cannot get its own: PostgreSQL refuses, and the error says so.
    public func ensureDailyPartitions(from first: PartitionDay, days: Int = 1) async throws {
        try await query("SELECT pushfleet_ensure_partitions($1::date, $2::int)", [.text(first.description), .int(Int64(days))])
    }
}
