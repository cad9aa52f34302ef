import Foundation
import PushPostgres

/// Registry upkeep for `pushfleet maintain`: devices not seen (registered or
/// registered again) for `registry.remove_after_days` are removed. FCM
/// expires an Android token after 270 days of inactivity; a token that old is
/// dead everywhere in practice. A device invalidated more recently than that
/// is kept, so the invalidation views still count it.
public enum DeviceUpkeep {
    /// Rows deleted per statement: a registry of millions is emptied in short
    /// transactions, not one long one holding its locks.
    static let chunk = 10_000

    /// Removes (or, `dryRun`, counts) the devices not seen for `days`; returns how many.
    public static func removeUnseen(days: Int, dryRun: Bool, on connection: PostgresConnection) async throws -> Int {
        let unseen = """
            last_seen_at < now() - make_interval(days => $1::int)
            AND COALESCE(invalidated_at, last_seen_at) < now() - make_interval(days => $1::int)
            """
        if dryRun {
            let rows = try await connection.query("SELECT count(*) AS n FROM devices WHERE \(unseen)", [.int(Int64(days))])
            return Int(try rows.first?.int("n") ?? 0)
        }
        var removed = 0
        while true {
            let rows = try await connection.query(
                "DELETE FROM devices WHERE id IN (SELECT id FROM devices WHERE \(unseen) LIMIT $2)",
                [.int(Int64(days)), .int(Int64(chunk))])
            removed += rows.affectedRows
            if rows.affectedRows < chunk { return removed }
        }
    }
}
