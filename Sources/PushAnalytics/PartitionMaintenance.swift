import Foundation
import PushCore
import Logging
import PushPostgres

/// Partition upkeep for `pushfleet maintain`: creates the coming days' daily
/// partitions of `deliveries` and `delivery_attempt_log` and detaches, then drops,
/// those whose whole day is past retention. Receipts older than the retention
/// go too. Last, the partitioned tables whose own statistics the hourly
/// views' plans need are analyzed (autovacuum never analyzes a partitioned
/// table itself, only its partitions).
public struct PartitionMaintenance: Sendable {
    /// What a run did (or, on a dry run, would do).
    public struct Report: Sendable, Equatable {
        public var created: [String] = []
        public var dropped: [String] = []
        /// Days whose partitions could not be created (e.g. rows of that day sit in the default partition).
        public var failures: [String] = []
        public var receiptsDeleted = 0
        /// `notification_ids` rows whose `created_at` is past retention (their
        /// ledger rows went with the partitions).
        public var notificationIDsDeleted = 0
        /// Partitioned tables analyzed (their statistics as a whole, migration 0014).
        public var analyzed: [String] = []
    }

    /// The partitioned tables `run` analyzes: `deliveries`, whose (hour, app,
    /// platform) group counts tell the planner to hash the hourly views' groups.
    public static let analyzedTables = ["deliveries"]

    private let connection: PostgresConnection
    private let logger: Logger

    public init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The daily partitions that exist now, by name.
    public func existingPartitions() async throws -> [String] {
        let rows = try await connection.query(
            """
            SELECT c.relname AS name
            FROM pg_inherits i
            JOIN pg_class c ON c.oid = i.inhrelid
            JOIN pg_class p ON p.oid = i.inhparent
            WHERE p.relname = ANY($1::text[]) AND pg_table_is_visible(p.oid)
            ORDER BY 1
            """, [.textArray(PartitionPlan.parents)])
        return rows.rows.compactMap { $0["name"] }
    }

    /// Runs the upkeep; `dryRun` only reports.
    public func run(now: Date = Date(), daysAhead: Int, retentionDays: Int, dryRun: Bool) async throws -> Report {
        let existing = try await existingPartitions()
        let plan = PartitionPlan(existing: existing, now: now, daysAhead: daysAhead, retentionDays: retentionDays)
        var report = Report()
        let have = Set(existing)
        for day in plan.ensureDays {
            let missing = PartitionPlan.parents.map { "\($0)_\(day.suffix)" }.filter { !have.contains($0) }
            guard !missing.isEmpty else { continue }
            if dryRun { report.created += missing; continue }
            do {
                try await connection.ensureDailyPartitions(from: day)
                report.created += missing
            } catch {
                logger.warning("could not create a daily partition", metadata: ["postgres.day": "\(day)", "error": "\(error)"])
                report.failures.append("\(day): \(error)")
            }
        }
        for name in plan.drop {
            guard let (parent, _) = PartitionDay.parse(partition: name) else { continue }
            report.dropped.append(name)
            if dryRun { continue }
            // Names are checked against `parent_YYYYMMDD` above, so quoting them is safe.
            try await connection.transaction { tx in
                try await tx.execute("ALTER TABLE \"\(parent)\" DETACH PARTITION \"\(name)\"")
                try await tx.execute("DROP TABLE \"\(name)\"")
            }
        }
        let cutoff = now.addingTimeInterval(-Double(retentionDays) * 86_400)
        let cutoffDay = PartitionDay(containing: cutoff).start
        if dryRun {
            let rows = try await connection.query("SELECT count(*) AS n FROM delivery_receipts WHERE at < $1", [.timestamp(cutoffDay)])
            report.receiptsDeleted = Int(try rows.first?.int("n") ?? 0)
        } else {
            report.receiptsDeleted = try await connection.query("DELETE FROM delivery_receipts WHERE at < $1", [.timestamp(cutoffDay)]).affectedRows
        }
        if dryRun {
            let rows = try await connection.query("SELECT count(*) AS n FROM notification_ids WHERE created_at < $1", [.timestamp(cutoffDay)])
            report.notificationIDsDeleted = Int(try rows.first?.int("n") ?? 0)
        } else {
            report.notificationIDsDeleted = try await connection.query(
                "DELETE FROM notification_ids WHERE created_at < $1", [.timestamp(cutoffDay)]).affectedRows
        }
        if !dryRun {
            // Samples each partition and the whole (a bounded sample, not a scan); the
            // views stay correct without it, only slower to group.
            for table in Self.analyzedTables {
                try await connection.execute("ANALYZE \"\(table)\"")
                report.analyzed.append(table)
            }
        }
        return report
    }
}
