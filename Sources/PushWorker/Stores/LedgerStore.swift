import Foundation
import PushCore
import PushPostgres

/// Reads the delivery ledger: what `notification_ids` and `deliveries` say
/// about a part's notifications and keys before anything is sent. One probe
/// per id and one per key, by primary key, whatever the table's size.
public final class LedgerStore: Sendable {
    private let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// What the ledger says of a batch's keys: those that already have a
    /// final status, those waiting on a retry tier (`retrying`, with the time
    /// of their last attempt; a row without one is left out), and those
    /// parked (with the time they were last parked).
    struct LedgerStates: Sendable, Equatable {
        var final: Set<DeliveryKey> = []
        var retrying: [DeliveryKey: Date] = [:]
        var parked: [DeliveryKey: Date] = [:]
    }

    /// The keys among `keys` that already have a final status, or wait on a retry tier.
    ///
    /// The status is filtered here, not in SQL: with `status IN (...)` in the
    /// query PostgreSQL probes the (status, created_at) index and filters every
    /// row of that status and timestamp, which for a campaign (one created_at
    /// for all its rows) grows with the table (2.5 s for 256 keys over 100k
    /// rows); on the primary key alone it is one probe per key (8 ms).
    func ledgerStates(_ keys: [DeliveryKey]) async throws -> LedgerStates {
        guard !keys.isEmpty else { return LedgerStates() }
        let rows = try await pool.withConnection { connection in
            // Prepared, and written so that any plan, also the generic one PostgreSQL
            // switches to after five runs (it does not know the arrays' length), probes
            // the primary key once per key: the LATERAL subquery (kept apart by its
            // LIMIT) is parameterised by the key. A plain join let the generic plan scan the table instead
            // (server CPU per 100k at half rate went from ~15 to 23-33 s).
            try await connection.query(
                prepared: """
                SELECT k.n::text AS n, k.t AS t, d.s AS s, d.l AS l
                FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS k(n, t, c)
                CROSS JOIN LATERAL (
                    SELECT status AS s, CASE WHEN status = 'parked' THEN updated_at ELSE last_attempt_at END AS l FROM deliveries
                    WHERE notification_id = k.n AND token = k.t AND created_at = k.c
                    LIMIT 1  -- at most one row (the primary key); keeps the subquery from being flattened
                ) d
                """,
                [.uuidArray(keys.map(\.notificationID)), .textArray(keys.map(\.token)), .timestampArray(keys.map(\.createdAt))])
        }
        // Almost always no key has a row yet: skip building the lookup (three strings per key).
        guard !rows.rows.isEmpty else { return LedgerStates() }
        var byID: [String: [DeliveryKey]] = [:]
        for key in keys { byID[key.notificationID.uuidString.lowercased() + "|" + key.token, default: []].append(key) }
        var result = LedgerStates()
        for row in rows.rows {
            guard let n = row["n"], let t = row["t"], let status = row["s"].flatMap(DeliveryStatus.init(rawValue:)) else { continue }
            if status.isFinal {
                for key in byID[n.lowercased() + "|" + t] ?? [] { result.final.insert(key) }
            } else if status == .retrying, let last = (try? row.date("l")) ?? nil {
                for key in byID[n.lowercased() + "|" + t] ?? [] { result.retrying[key] = last }
            } else if status == .parked, let last = (try? row.date("l")) ?? nil {
                for key in byID[n.lowercased() + "|" + t] ?? [] { result.parked[key] = last }
            }
        }
        return result
    }

    /// What `notification_ids` holds about a batch's ids.
    struct LedgerIDs: Sendable {
        /// Ids the ledger files under another `created_at` than the one given: that stored `created_at`.
        var createdAt: [UUID: Date] = [:]
        /// Every id the ledger has seen. An id not in here has no `deliveries`
        /// row: ids are written in the same statement as their first rows
        /// (migration 0006 filed the ids of older rows), and purged only with
        /// their partitions. So only keys of these ids can already be final.
        var known: Set<UUID> = []
    }

    /// One probe of `notification_ids` per id of `ids` (id → the created_at given).
    func ledgerIDs(_ ids: [UUID: Date]) async throws -> LedgerIDs {
        guard !ids.isEmpty else { return LedgerIDs() }
        let list = Array(ids)
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                prepared: """
                SELECT k.n AS n, e.c AS c
                FROM unnest($1::uuid[]) AS k(n)
                CROSS JOIN LATERAL (
                    SELECT created_at AS c FROM notification_ids WHERE notification_id = k.n
                    LIMIT 1  -- the primary key: one probe per id, whatever plan
                ) e
                """,
                [.uuidArray(list.map(\.key))])
        }
        var result = LedgerIDs()
        for row in rows.rows {
            guard let n = try row.uuid("n"), let c = try row.date("c") else { continue }
            result.known.insert(n)
            if let given = ids[n], given != c { result.createdAt[n] = c }
        }
        return result
    }

    /// The ledger's unfinished deliveries (`pending`, `retrying`, `parked`),
    /// per status, and the `created_at` of the oldest: what waits on retry
    /// tiers and parked topics, fleet-wide. One index scan of the unfinished
    /// rows (`deliveries_unfinished_idx`), which final rows never enter.
    public func unfinished() async throws -> (byStatus: [String: Int], oldest: Date?) {
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT status AS s, count(*) AS n, min(created_at) AS o FROM deliveries
                WHERE status IN ('pending', 'retrying', 'parked') GROUP BY status
                """)
        }
        var byStatus: [String: Int] = [:]
        var oldest: Date?
        for row in rows.rows {
            guard let status = row["s"], let n = row["n"].flatMap({ Int($0) }) else { continue }
            byStatus[status] = n
            if let o = try? row.date("o") { oldest = min(oldest ?? o, o) }
        }
        return (byStatus, oldest)
    }
}
