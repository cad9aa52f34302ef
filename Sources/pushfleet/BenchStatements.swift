import Foundation
import Logging
import PushPostgres

/// `bench pipeline --pg-statements`: which statements the server spent its
/// time on during the run, from the `pg_stat_statements` extension (which
/// must be preloaded: PUSHFLEET_PG_CONF for scripts/with-postgres.sh).
enum BenchStatements {
    static func reset(url: String, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        do {
            _ = try await connection.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", [])
            _ = try await connection.query("SELECT pg_stat_statements_reset()", [])
        } catch {
            throw CommandFailure("--pg-statements needs pg_stat_statements preloaded (PUSHFLEET_PG_CONF=\"shared_preload_libraries = 'pg_stat_statements'\"): \(error)")
        }
    }

    /// The ten statements with the most execution time, as a table with µs per
    /// notification (planning time too with `pg_stat_statements.track_planning = on`).
    static func top(url: String, notifications: Int, logger: Logger) async throws -> String {
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        let rows = try await connection.query(
            """
            SELECT calls::text AS calls, rows::text AS rows, round(total_exec_time::numeric, 1)::text AS ms,
                   round(total_plan_time::numeric, 1)::text AS plan_ms,
                   round((total_exec_time * 1000 / $1::float8)::numeric, 2)::text AS us_per_n,
                   left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
            FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 10
            """, [.text(String(notifications))])
        var lines = ["PostgreSQL statements by execution time (pg_stat_statements)",
                     "      calls        rows     total ms   plan ms  µs/notif  statement"]
        for row in rows.rows {
            func right(_ text: String?, _ width: Int) -> String {
                let text = text ?? ""
                return String(repeating: " ", count: max(0, width - text.count)) + text
            }
            lines.append([right(row["calls"], 11), right(row["rows"], 11), right(row["ms"], 12), right(row["plan_ms"], 9), right(row["us_per_n"], 9)]
                .joined(separator: " ") + "  " + (row["q"] ?? ""))
        }
        return lines.joined(separator: "\n")
    }
}
