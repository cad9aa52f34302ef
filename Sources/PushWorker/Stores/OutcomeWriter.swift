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
    /// What the registry said about directly named tokens, for a short while.
    let registryCache: TokenRegistryCache

    /// `worker.id`: what `delivery_attempts.worker` records.
    let workerID: String

    init(pool: PostgresPool, logger: Logger, observer: any WorkerObserver = NoWorkerObserver(),
         workerID: String = WorkerConfiguration.Worker().id,
         registryCacheTTL: Duration = WorkerConfiguration.Registry().cacheTTL) {
        self.workerID = workerID
        self.pool = pool
        self.logger = logger
        self.observer = observer
        self.registryCache = TokenRegistryCache(ttl: registryCacheTTL)
    }

    static let finalStatuses = DeliveryStatus.allCases.filter(\.isFinal).map { "'\($0.rawValue)'" }.joined(separator: ",")

    /// What the ledger says of a batch's keys: those that already have a
    /// final status, and those waiting on a retry tier (`retrying`), with
    /// the time of their last attempt (a row without one is left out).
    struct LedgerStates: Sendable, Equatable {
        var final: Set<DeliveryKey> = []
        var retrying: [DeliveryKey: Date] = [:]
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
                    SELECT status AS s, last_attempt_at AS l FROM deliveries
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

    /// Writes one batch's outcomes in one transaction; returns the delivery
    /// rows as written (one per key, see `collapse`).
    @discardableResult
    func write(_ outcome: BatchOutcome) async throws -> [DeliveryRecord] {
        let deliveries = Self.collapse(outcome.deliveries)
        let days = Set(deliveries.map { Self.dayString($0.key.createdAt) })
        try await ensurePartitions(days)
        let started = ContinuousClock.now
        if outcome.deviceUpdates.isEmpty, outcome.invalidations.isEmpty, outcome.rejections.isEmpty {
            // The common batch: deliveries and attempts in one statement (one round
            // trip, atomic on its own) instead of BEGIN, two inserts and COMMIT.
            if !deliveries.isEmpty || !outcome.attempts.isEmpty {
                let deliveryBinds = Self.deliveryBinds(deliveries), idBinds = Self.notificationIDBinds(deliveries)
                // A campaign's batches are all new ids: plain inserts, with first tries that
                // ended their delivery kept on its row (0012); the upsert, every attempt
                // logged, only if a row turned up since the lookup (a previous owner's write).
                let fresh = !deliveries.isEmpty && deliveries.allSatisfy { outcome.idsNewToLedger.contains($0.key.notificationID) }
                _ = try await pool.withConnection { connection in
                    if fresh {
                        do {
                            let (latencies, logged) = Self.foldFirstAttempts(deliveries: deliveries, attempts: outcome.attempts)
                            return try await connection.query(
                                prepared: Self.freshFoldedDeliveriesAndAttemptsSQL,
                                deliveryBinds + [.doubleArray(latencies)] + Self.attemptBinds(logged, worker: workerID) + idBinds)
                        } catch let error as PostgresError where error.sqlState == "23505" {
                            logger.info("ledger rows appeared since the batch's lookup; written with the upsert",
                                        metadata: ["postgres.detail": "\(error.detail ?? error.message)"])
                        }
                    }
                    return try await connection.query(
                        prepared: Self.deliveriesAndAttemptsSQL,
                        deliveryBinds + Self.attemptBinds(outcome.attempts, worker: workerID) + idBinds)
                }
            }
            observer.batchCommitted(seconds: (ContinuousClock.now - started).seconds)
            return deliveries
        }
        try await pool.withConnection { connection in
            try await connection.transaction { tx in
                // Registry first: a registration in this batch is what a 410 below is compared with.
                if !outcome.deviceUpdates.isEmpty { try await Self.applyDeviceEvents(outcome.deviceUpdates, on: tx) }
                if !deliveries.isEmpty {
                    try await tx.query(prepared: Self.upsertDeliveriesSQL, Self.deliveryBinds(deliveries))
                    try await tx.query(prepared: Self.insertNotificationIDsSQL(), Self.notificationIDBinds(deliveries))
                }
                if !outcome.attempts.isEmpty {
                    try await tx.query(prepared: Self.insertAttemptsSQL(), Self.attemptBinds(outcome.attempts, worker: workerID))
                }
                if !outcome.invalidations.isEmpty { try await Self.invalidate(outcome.invalidations, on: tx) }
                if !outcome.rejections.isEmpty { try await Self.insertRejections(outcome.rejections, on: tx) }
            }
        }
        // This worker just changed these tokens in the registry: its cached view of them is stale.
        registryCache.forget(outcome.invalidations.map { AppToken(app: $0.app, platform: $0.platform, token: $0.token) })
        registryCache.forget(outcome.deviceUpdates.map { AppToken(app: $0.app, platform: $0.platform, token: $0.token) })
        observer.batchCommitted(seconds: (ContinuousClock.now - started).seconds)
        return deliveries
    }

    /// One row per key (Postgres cannot upsert the same row twice in one
    /// statement); a final status wins over a non-final one.
    static func collapse(_ records: [DeliveryRecord]) -> [DeliveryRecord] {
        var index: [DeliveryKey: Int] = [:]
        index.reserveCapacity(records.count)  // no rehash of every key as it grows
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
        String(PartitionDay(containing: date).daysSinceEpoch)
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

    /// Marks tokens invalid, unless the device registered again after the
    /// time the provider says the token died (APNs 410 timestamp rule).
    /// `invalidated_at` is when we learnt it, `provider_invalid_since` what the
    /// provider said (the views count by the former, the revive rule uses the latter).
    private static func invalidate(_ items: [TokenInvalidation], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO devices AS d (app, platform, token, registered_at, last_seen_at, invalidated_at,
                                      provider_invalid_since, invalid_reason)
            SELECT DISTINCT ON (a, p, t) a, p, t, LEAST(s, l), LEAST(s, l), l, s, r
            FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[]) AS u(a, p, t, s, r, l)
            ORDER BY a, p, t, s DESC
            ON CONFLICT (app, platform, token) DO UPDATE SET
                invalidated_at = EXCLUDED.invalidated_at, provider_invalid_since = EXCLUDED.provider_invalid_since,
                invalid_reason = EXCLUDED.invalid_reason
            WHERE d.invalidated_at IS NULL AND d.registered_at <= EXCLUDED.provider_invalid_since
            """,
            [
                .textArray(items.map(\.app)), .textArray(items.map(\.platform.rawValue)),
                .textArray(items.map(\.token)), .timestampArray(items.map(\.since)), .textArray(items.map(\.reason)),
                .timestampArray(items.map(\.learnedAt)),
            ])
    }

    /// A rejection's app is the producer's text, read before it was checked:
    /// kept to the 255 bytes an app may have, not the 200 KB a refused
    /// message may carry.
    static func rejectionApp(_ app: String?) -> String? {
        app.map { BoundedText.cut($0, maxBytes: IntakeLimits.maxAppLength).storableText }
    }

    static func insertRejections(_ items: [IntakeRejection], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO intake_rejections (notification_id, app, kind, reason, kafka_topic, kafka_partition, kafka_offset, field_path)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[])
            ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING
            """,
            [
                .uuidArray(items.map(\.notificationID)), .textArray(items.map { Self.rejectionApp($0.app) }),
                .textArray(items.map(\.kind.storableText)), .textArray(items.map(\.reason.storableText)),
                .textArray(items.map(\.topic.storableText)),
                .intArray(items.map { Int64($0.partition) }), .intArray(items.map(\.offset)),
                .textArray(items.map { $0.fieldPath?.storableText }),
            ])
    }
}
