import Foundation
import PushCore
import PushPostgres

/// Applies device receipts to the delivery ledger: one transaction per batch,
/// three batched statements, idempotent.
///
/// Every receipt is kept in `delivery_receipts` (so one that overtakes the
/// provider outcome is picked up by the `deliveries` insert triggers of
/// migrations 0002 and 0004), and `delivered_at`/`opened_at` of the matching delivery
/// rows are set to the earliest reported time. The same trigger moves the
/// status forward (never backwards, never off a failure status).
public struct ReceiptStore: Sendable {
    private let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// What one batch changed.
    public struct Applied: Sendable, Equatable {
        /// Receipt rows stored for the first time (repeats are not counted).
        public var newReceipts: Int
        /// Delivery rows whose receipt times changed (a repeated receipt changes none).
        public var matchedDeliveries: Int
    }

    /// Writes `receipts` in one transaction.
    @discardableResult
    public func apply(_ receipts: [Receipt]) async throws -> Applied {
        guard !receipts.isEmpty else { return Applied(newReceipts: 0, matchedDeliveries: 0) }
        return try await pool.withConnection { connection in
            try await connection.transaction { tx in try await Self.apply(receipts, on: tx) }
        }
    }

    /// Records receipt messages that did not apply (`intake_rejections`,
    /// once per Kafka offset).
    func recordRejections(_ rows: [IntakeRejection]) async throws {
        guard !rows.isEmpty else { return }
        try await pool.withConnection { connection in try await IntakeRejectionRows.insert(rows, on: connection) }
    }

    /// The batch's statements, on a connection already in a transaction.
    public static func apply(_ receipts: [Receipt], on tx: PostgresConnection) async throws -> Applied {
        // Exclusive against delivery inserts (their statement trigger takes it shared): see 0002 and 0004.
        try await tx.query("SELECT pg_advisory_xact_lock(pushfleet_receipts_lock_key())")
        let binds: [PostgresValue] = [
            .uuidArray(receipts.map(\.notificationID)),
            .textArray(receipts.map(\.token)),
            .textArray(receipts.map(\.kind.rawValue)),
            .textArray(receipts.map(\.app)),
            .textArray(receipts.map(\.platform.rawValue)),
            .timestampArray(receipts.map(\.at)),
        ]
        let stored = try await tx.query(
            """
            INSERT INTO delivery_receipts AS r (notification_id, token, kind, app, platform, at)
            SELECT DISTINCT ON (n, t, k) n, t, k, a, p, at
            FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS u(n, t, k, a, p, at)
            ORDER BY n, t, k, at
            ON CONFLICT (notification_id, token, kind) DO UPDATE SET at = EXCLUDED.at
            WHERE EXCLUDED.at < r.at
            RETURNING (xmax = 0) AS inserted
            """, binds)
        let updated = try await tx.query(
            """
            UPDATE deliveries d
            SET delivered_at = LEAST(d.delivered_at, u.delivered, u.opened),
                opened_at = LEAST(d.opened_at, u.opened),
                updated_at = now()
            FROM (
                SELECT n, t, min(at) FILTER (WHERE k = 'delivered') AS delivered, min(at) FILTER (WHERE k = 'opened') AS opened
                FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS u(n, t, k, a, p, at)
                GROUP BY n, t
            ) u
            WHERE d.notification_id = u.n AND d.token = u.t
              AND (d.delivered_at IS DISTINCT FROM LEAST(d.delivered_at, u.delivered, u.opened)
                   OR d.opened_at IS DISTINCT FROM LEAST(d.opened_at, u.opened))
            """, binds)
        let inserted = stored.rows.filter { $0["inserted"] == "t" }.count
        return Applied(newReceipts: inserted, matchedDeliveries: updated.affectedRows)
    }
}
