import Foundation
import Logging
import PushCore
import PushPostgres

/// Reads and writes the delivery ledger in PostgreSQL: one query per batch
/// for the ledger check, one transaction per batch for the outcomes.
final class OutcomeStore: Sendable {
    let pool: PostgresPool
    private let logger: Logger
    private let observer: any WorkerObserver
    private let ensuredDays = Locked<Set<String>>([])

    init(pool: PostgresPool, logger: Logger, observer: any WorkerObserver = NoWorkerObserver()) {
        self.pool = pool
        self.logger = logger
        self.observer = observer
    }

    static let finalStatuses = DeliveryStatus.allCases.filter(\.isFinal).map { "'\($0.rawValue)'" }.joined(separator: ",")

    /// The keys among `keys` that already have a final status.
    func finalKeys(_ keys: [DeliveryKey]) async throws -> Set<DeliveryKey> {
        guard !keys.isEmpty else { return [] }
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT d.notification_id::text AS n, d.token AS t, k.c::text AS c
                FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS k(n, t, c)
                JOIN deliveries d ON d.notification_id = k.n AND d.token = k.t AND d.created_at = k.c
                WHERE d.status IN (\(OutcomeStore.finalStatuses))
                """,
                [.uuidArray(keys.map(\.notificationID)), .textArray(keys.map(\.token)), .timestampArray(keys.map(\.createdAt))])
        }
        var byID: [String: [DeliveryKey]] = [:]
        for key in keys { byID[key.notificationID.uuidString.lowercased() + "|" + key.token, default: []].append(key) }
        var result = Set<DeliveryKey>()
        for row in rows.rows {
            guard let n = row["n"], let t = row["t"] else { continue }
            for key in byID[n.lowercased() + "|" + t] ?? [] { result.insert(key) }
        }
        return result
    }

    /// Writes one batch's outcomes in one transaction.
    func write(_ outcome: BatchOutcome) async throws {
        let deliveries = Self.collapse(outcome.deliveries)
        let days = Set(deliveries.map { Self.dayString($0.key.createdAt) })
        try await ensurePartitions(days)
        let started = ContinuousClock.now
        try await pool.withConnection { connection in
            try await connection.transaction { tx in
                // Registry first: a registration in this batch is what a 410 below is compared with.
                if !outcome.deviceUpdates.isEmpty { try await Self.applyDeviceEvents(outcome.deviceUpdates, on: tx) }
                if !deliveries.isEmpty { try await Self.upsertDeliveries(deliveries, on: tx) }
                if !outcome.attempts.isEmpty { try await Self.insertAttempts(outcome.attempts, on: tx) }
                if !outcome.invalidations.isEmpty { try await Self.invalidate(outcome.invalidations, on: tx) }
                if !outcome.rejections.isEmpty { try await Self.insertRejections(outcome.rejections, on: tx) }
            }
        }
        observer.batchCommitted(seconds: (ContinuousClock.now - started).seconds)
    }

    /// One row per key (Postgres cannot upsert the same row twice in one
    /// statement); a final status wins over a non-final one.
    static func collapse(_ records: [DeliveryRecord]) -> [DeliveryRecord] {
        var index: [DeliveryKey: Int] = [:]
        var out: [DeliveryRecord] = []
        out.reserveCapacity(records.count)
        for record in records {
            if let i = index[record.key] {
                let attempts = out[i].attempts + record.attempts
                if record.status.isFinal || !out[i].status.isFinal { out[i] = record }
                out[i].attempts = attempts
            } else {
                index[record.key] = out.count
                out.append(record)
            }
        }
        return out
    }

    static func dayString(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return String(days)
    }

    private func ensurePartitions(_ days: Set<String>) async throws {
        let missing = ensuredDays.withLock { days.subtracting($0) }
        guard !missing.isEmpty else { return }
        for day in missing {
            guard let d = Int64(day) else { continue }
            let date = Date(timeIntervalSince1970: TimeInterval(d * 86_400))
            do {
                _ = try await pool.withConnection { connection in
                    try await connection.query("SELECT pushfleet_ensure_partitions(($1::timestamptz AT TIME ZONE 'UTC')::date, 1)", [.timestamp(date)])
                }
            } catch {
                // Rows for that day already sit in the default partition; they stay there.
                logger.warning("could not create a daily partition; rows go to the default partition",
                               metadata: ["postgres.day": "\(Timestamps.format(date))", "error": "\(error)"])
            }
            ensuredDays.withLock { _ = $0.insert(day) }
        }
    }

    private static func upsertDeliveries(_ records: [DeliveryRecord], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO deliveries AS d (notification_id, created_at, app, platform, token, status, attempts,
                provider_status, provider_reason, provider_message_id, detail, enqueued_at,
                first_attempt_at, last_attempt_at, accepted_at, final_at, updated_at)
            SELECT n, c, a, p, t, s, at, ps, pr, pm, dt, eq, fa, la, aa, fi, now()
            FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[],
                        $8::bigint[], $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[],
                        $14::timestamptz[], $15::timestamptz[], $16::timestamptz[])
                 AS u(n, c, a, p, t, s, at, ps, pr, pm, dt, eq, fa, la, aa, fi)
            ON CONFLICT (notification_id, token, created_at) DO UPDATE SET
                status = CASE WHEN d.status IN (\(finalStatuses)) THEN d.status ELSE EXCLUDED.status END,
                attempts = d.attempts + EXCLUDED.attempts,
                provider_status = CASE WHEN d.status IN (\(finalStatuses)) THEN d.provider_status ELSE EXCLUDED.provider_status END,
                provider_reason = CASE WHEN d.status IN (\(finalStatuses)) THEN d.provider_reason ELSE EXCLUDED.provider_reason END,
                provider_message_id = COALESCE(d.provider_message_id, EXCLUDED.provider_message_id),
                detail = CASE WHEN d.status IN (\(finalStatuses)) THEN d.detail ELSE EXCLUDED.detail END,
                enqueued_at = COALESCE(d.enqueued_at, EXCLUDED.enqueued_at),
                first_attempt_at = COALESCE(d.first_attempt_at, EXCLUDED.first_attempt_at),
                last_attempt_at = GREATEST(d.last_attempt_at, EXCLUDED.last_attempt_at),
                accepted_at = COALESCE(d.accepted_at, EXCLUDED.accepted_at),
                final_at = COALESCE(d.final_at, EXCLUDED.final_at),
                updated_at = now()
            """,
            [
                .uuidArray(records.map(\.key.notificationID)),
                .timestampArray(records.map(\.key.createdAt)),
                .textArray(records.map(\.app)),
                .textArray(records.map { $0.platform?.rawValue ?? "none" }),
                .textArray(records.map(\.key.token)),
                .textArray(records.map(\.status.rawValue)),
                .intArray(records.map { Int64($0.attempts) }),
                .intArray(records.map { $0.providerStatus.map(Int64.init) }),
                .textArray(records.map(\.providerReason)),
                .textArray(records.map(\.providerMessageID)),
                .textArray(records.map(\.detail)),
                .timestampArray(records.map(\.enqueuedAt)),
                .timestampArray(records.map(\.firstAttemptAt)),
                .timestampArray(records.map(\.lastAttemptAt)),
                .timestampArray(records.map(\.acceptedAt)),
                .timestampArray(records.map(\.finalAt)),
            ])
    }

    private static func insertAttempts(_ attempts: [AttemptRecord], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO delivery_attempts (notification_id, created_at, token, attempt, attempted_at, outcome,
                provider, provider_status, provider_reason, latency_ms, worker)
            SELECT n, c, t, at, aa, o, p, ps, pr, l, current_setting('application_name')
            FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::bigint[], $5::timestamptz[], $6::text[],
                        $7::text[], $8::bigint[], $9::text[], $10::float8[])
                 AS u(n, c, t, at, aa, o, p, ps, pr, l)
            """,
            [
                .uuidArray(attempts.map(\.key.notificationID)),
                .timestampArray(attempts.map(\.key.createdAt)),
                .textArray(attempts.map(\.key.token)),
                .intArray(attempts.map { Int64($0.attempt) }),
                .timestampArray(attempts.map(\.attemptedAt)),
                .textArray(attempts.map(\.outcome)),
                .textArray(attempts.map(\.provider.rawValue)),
                .intArray(attempts.map { $0.providerStatus.map(Int64.init) }),
                .textArray(attempts.map(\.providerReason)),
                .textArray(attempts.map { String($0.latencyMilliseconds) }),
            ])
    }

    /// Marks tokens invalid, unless the device registered again after the
    /// time the provider says the token died (APNs 410 timestamp rule).
    private static func invalidate(_ items: [TokenInvalidation], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO devices AS d (app, platform, token, registered_at, last_seen_at, invalidated_at, invalid_reason)
            SELECT DISTINCT ON (a, p, t) a, p, t, s, s, s, r
            FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[]) AS u(a, p, t, s, r)
            ORDER BY a, p, t, s DESC
            ON CONFLICT (app, platform, token) DO UPDATE SET
                invalidated_at = EXCLUDED.invalidated_at, invalid_reason = EXCLUDED.invalid_reason
            WHERE d.invalidated_at IS NULL AND d.registered_at <= EXCLUDED.invalidated_at
            """,
            [
                .textArray(items.map(\.app)), .textArray(items.map(\.platform.rawValue)),
                .textArray(items.map(\.token)), .timestampArray(items.map(\.since)), .textArray(items.map(\.reason)),
            ])
    }

    private static func insertRejections(_ items: [IntakeRejection], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO intake_rejections (notification_id, app, kind, reason, kafka_topic, kafka_partition, kafka_offset)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[])
            ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING
            """,
            [
                .uuidArray(items.map(\.notificationID)), .textArray(items.map(\.app)),
                .textArray(items.map(\.kind)), .textArray(items.map(\.reason)), .textArray(items.map(\.topic)),
                .intArray(items.map { Int64($0.partition) }), .intArray(items.map(\.offset)),
            ])
    }
}
