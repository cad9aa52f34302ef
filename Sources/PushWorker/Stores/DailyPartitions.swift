import Foundation
import Logging
import PushCore
import PushPostgres

/// The daily ledger partitions an outcome write needs, created on demand
/// once per day per process (`pushfleet maintain` creates them ahead; this
/// covers a day it has not reached, e.g. a `created_at` in the future window).
final class DailyPartitions: Sendable {
    private let pool: PostgresPool
    private let logger: Logger
    private let ensured = Locked<Set<PartitionDay>>([])

    init(pool: PostgresPool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Creates the partitions of `days` this process has not ensured yet. A
    /// day that cannot get one (its rows already sit in the default
    /// partition) is logged and not asked about again: its rows go to the
    /// default partition.
    func ensure(_ days: Set<PartitionDay>) async {
        let missing = ensured.withLock { days.subtracting($0) }
        for day in missing {
            do {
                try await pool.withConnection { try await $0.ensureDailyPartitions(from: day) }
            } catch {
                logger.warning("could not create a daily partition; rows go to the default partition",
                               metadata: ["postgres.day": "\(day)", "error": "\(error)"])
            }
            ensured.withLock { _ = $0.insert(day) }
        }
    }
}
