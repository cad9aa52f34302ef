import Foundation
import PushCore
import PushPostgres

/// The outcome writes' SQL and bound parameters (parallel arrays for `unnest`).
extension OutcomeWriter {
    /// `unnest($i::type[]) AS name, ...`: parallel arrays zipped into rows by
    /// set-returning functions in a select list, which PostgreSQL steps in
    /// lockstep one row at a time. The same arrays as `FROM unnest(a, b, ...)`
    /// give the same rows, but that form first copies every array's elements
    /// into a tuplestore of its own (a function in FROM is materialised),
    /// about 1 µs a row of the outcome write here (docs/benchmarks.md).
    /// The arrays are parameters `$first`, `$first + 1`, ... in order.
    static func zipped(from first: Int, _ arrays: [(type: String, name: String)]) -> String {
        "SELECT " + arrays.enumerated().map { "unnest($\(first + $0.offset)::\($0.element.type)[]) AS \($0.element.name)" }
            .joined(separator: ", ")
    }

    /// The delivery columns' parallel arrays, in parameter order: the last is
    /// the campaign (migration 0018), NULL for a notification without one.
    static let deliveryArrays: [(type: String, name: String)] = [
        ("uuid", "n"), ("timestamptz", "c"), ("text", "a"), ("text", "p"), ("text", "t"), ("text", "s"),
        ("bigint", "at"), ("bigint", "ps"), ("text", "pr"), ("text", "pm"), ("text", "dt"), ("timestamptz", "eq"),
        ("timestamptz", "fa"), ("timestamptz", "la"), ("timestamptz", "aa"), ("timestamptz", "fi"), ("text", "cp"),
    ]

    /// Inserts deliveries from the 17 parallel arrays of `deliveryArrays`
    /// ($1...$17); `foldedAttempts` adds an 18th ($18, float8: a first
    /// attempt's round trip kept on its row, NULL where the row's attempts are
    /// logged) and the worker (`$<worker>`) beside each round trip (migration 0012).
    static func insertDeliveriesSQL(foldedAttempts worker: Int? = nil) -> String {
        let arrays = deliveryArrays + (worker == nil ? [] : [("float8", "l")])
        return """
            INSERT INTO deliveries AS d (notification_id, created_at, app, platform, token, status, attempts,
                provider_status, provider_reason, provider_message_id, detail, enqueued_at,
                first_attempt_at, last_attempt_at, accepted_at, final_at, campaign, updated_at\(worker == nil ? "" : ",\n    first_attempt_latency_ms, first_attempt_worker"))
            SELECT n, c, a, p, t, s, at, ps, pr, pm, dt, eq, fa, la, aa, fi, cp, now()\(worker.map { ", l, CASE WHEN l IS NOT NULL THEN $\($0)::text END" } ?? "")
            FROM (\(zipped(from: 1, arrays))) AS u
            """
    }

    /// Whether the stored row keeps its status (and the columns that go with
    /// it) over the one written: a final status is never overwritten, except
    /// that `cancelled` yields to the final outcome of an attempt (a send
    /// already under way when the campaign was cancelled: what the provider
    /// answered is what happened to the delivery).
    static let keepsStoredStatus = """
        (d.status IN (\(finalStatuses)) AND NOT (d.status = 'cancelled' AND EXCLUDED.attempts > 0 AND EXCLUDED.status IN (\(finalStatuses))))
        """

    /// Upserts deliveries from the same 17 arrays (`keepsStoredStatus`).
    static let upsertDeliveriesSQL = insertDeliveriesSQL() + """

        ON CONFLICT (notification_id, token, created_at) DO UPDATE SET
            status = CASE WHEN \(keepsStoredStatus) THEN d.status ELSE EXCLUDED.status END,
            attempts = d.attempts + EXCLUDED.attempts,
            provider_status = CASE WHEN \(keepsStoredStatus) THEN d.provider_status ELSE EXCLUDED.provider_status END,
            provider_reason = CASE WHEN \(keepsStoredStatus) THEN d.provider_reason ELSE EXCLUDED.provider_reason END,
            provider_message_id = COALESCE(d.provider_message_id, EXCLUDED.provider_message_id),
            detail = CASE WHEN \(keepsStoredStatus) THEN d.detail ELSE EXCLUDED.detail END,
            enqueued_at = COALESCE(d.enqueued_at, EXCLUDED.enqueued_at),
            first_attempt_at = COALESCE(d.first_attempt_at, EXCLUDED.first_attempt_at),
            last_attempt_at = GREATEST(d.last_attempt_at, EXCLUDED.last_attempt_at),
            accepted_at = COALESCE(d.accepted_at, EXCLUDED.accepted_at),
            final_at = CASE WHEN \(keepsStoredStatus) THEN COALESCE(d.final_at, EXCLUDED.final_at) ELSE COALESCE(EXCLUDED.final_at, d.final_at) END,
            campaign = COALESCE(d.campaign, EXCLUDED.campaign),
            updated_at = now()
        """

    /// Appends attempts from 12 parallel arrays (the last the campaign) and
    /// the worker id (a scalar) starting at parameter `$first`.
    static func insertAttemptsSQL(first: Int = 1) -> String {
        let arrays: [(type: String, name: String)] = [
            ("uuid", "n"), ("timestamptz", "c"), ("text", "t"), ("bigint", "at"), ("timestamptz", "aa"), ("text", "o"),
            ("text", "p"), ("bigint", "ps"), ("text", "pr"), ("float8", "l"), ("text", "ti"), ("text", "cp"),
        ]
        return """
            INSERT INTO delivery_attempt_log (notification_id, created_at, token, attempt, attempted_at, outcome,
                provider, provider_status, provider_reason, latency_ms, tier, campaign, worker)
            SELECT n, c, t, at, aa, o, p, ps, pr, l, ti, cp, $\(first + arrays.count)::text
            FROM (\(zipped(from: first, arrays))) AS u
            """
    }

    /// Records each notification id with the created_at its rows are filed
    /// under, from two parallel arrays (one entry per id) at `$first`; an id
    /// already recorded is left as it is, unless `fresh` (ids known to be new:
    /// a recorded one then fails the statement with 23505).
    static func insertNotificationIDsSQL(first: Int = 1, fresh: Bool = false) -> String {
        """
        INSERT INTO notification_ids (notification_id, created_at)
        \(zipped(from: first, [("uuid", "n"), ("timestamptz", "c")]))
        """ + (fresh ? "" : "\nON CONFLICT (notification_id) DO NOTHING")
    }

    /// The three writes as one statement: data-modifying CTEs run in one snapshot
    /// and commit together, so a batch's deliveries, attempts and ids land (or
    /// not) as one. Deliveries $1...$17, attempts $18...$30 (12 arrays and the
    /// worker), ids $31, $32.
    static let deliveriesAndAttemptsSQL = """
        WITH d AS (\(upsertDeliveriesSQL)), a AS (\(insertAttemptsSQL(first: 18))), i AS (\(insertNotificationIDsSQL(first: 31)))
        SELECT 1
        """

    /// `deliveriesAndAttemptsSQL` for a batch whose ids are all new to the
    /// ledger (no row can exist for them): plain inserts into `deliveries`
    /// and `notification_ids`, without the speculative insertion ON CONFLICT
    /// needs (~2.5 µs a delivery row here), and the first attempts that ended
    /// their deliveries kept on the delivery rows (migration 0012): an 18th
    /// array ($18, float8, NULL where the row's attempts are logged)
    /// of round trips, the worker ($31) beside each, the other attempts logged
    /// from $19, the ids at $32, $33. A row that exists after all (another
    /// writer since the lookup) fails the statement with 23505; the caller
    /// then writes the batch with `deliveriesAndAttemptsSQL`, every attempt logged.
    static let freshFoldedDeliveriesAndAttemptsSQL = """
        WITH d AS (\(insertDeliveriesSQL(foldedAttempts: 31))), a AS (\(insertAttemptsSQL(first: 19))),
             i AS (\(insertNotificationIDsSQL(first: 32, fresh: true)))
        SELECT 1
        """

    /// Splits a batch's attempts for `freshFoldedDeliveriesAndAttemptsSQL`:
    /// a delivery made by exactly one attempt in this batch, its first
    /// (`attempt` 1, from the intake topic), whose outcome is the delivery's
    /// final status (`accepted`, `invalid_token`, `rejected`), keeps that
    /// attempt's round trip on its row (`latencies`, parallel to
    /// `deliveries`); every other attempt is in `logged`. Only for rows known
    /// to be new: on an existing row the attempt would not be the first.
    static func foldFirstAttempts(deliveries: [DeliveryRecord], attempts: [AttemptRecord])
        -> (latencies: [Double?], logged: [AttemptRecord]) {
        // Two hashes of a key per delivery (the keys hold a 64-byte token): one to
        // count, one to look up; folded attempts are marked by index.
        var perKey: [DeliveryKey: (count: Int, index: Int)] = [:]
        perKey.reserveCapacity(attempts.count)
        for (index, attempt) in attempts.enumerated() {
            perKey[attempt.key, default: (0, index)].count += 1
        }
        var folded = [Bool](repeating: false, count: attempts.count)
        var any = false
        var latencies: [Double?] = []
        latencies.reserveCapacity(deliveries.count)
        for delivery in deliveries {
            guard delivery.attempts == 1, let (count, index) = perKey[delivery.key], count == 1 else {
                latencies.append(nil)
                continue
            }
            let attempt = attempts[index]
            guard attempt.attempt == 1, attempt.tier == nil, Self.isFoldable(delivery.status),
                  attempt.outcome == delivery.status.rawValue, attempt.provider == delivery.provider,
                  // The view reads these from the row: fold only what it would read back the same.
                  attempt.providerStatus == delivery.providerStatus, attempt.attemptedAt == delivery.firstAttemptAt,
                  attempt.providerReason?.storableText == delivery.providerReason?.storableText,
                  attempt.latencyMilliseconds.isFinite else {
                latencies.append(nil)
                continue
            }
            folded[index] = true
            any = true
            latencies.append(attempt.latencyMilliseconds)
        }
        let logged = any ? attempts.indices.filter { !folded[$0] }.map { attempts[$0] } : attempts
        return (latencies, logged)
    }

    /// The statuses one attempt ends a delivery with, spelt as its outcome.
    static func isFoldable(_ status: DeliveryStatus) -> Bool {
        switch status {
        case .accepted, .invalidToken, .rejected: true
        case .pending, .retrying, .parked, .delivered, .opened, .expired, .deadLettered, .cancelled: false
        }
    }

    /// One (id, created_at) per notification id among `records`.
    static func notificationIDBinds(_ records: [DeliveryRecord]) -> [PostgresValue] {
        var seen = Set<UUID>()
        seen.reserveCapacity(records.count)
        var ids: [UUID] = []
        var times: [Date] = []
        for record in records where seen.insert(record.key.notificationID).inserted {
            ids.append(record.key.notificationID)
            times.append(record.key.createdAt)
        }
        return [.uuidArray(ids), .timestampArray(times)]
    }

    static func deliveryBinds(_ records: [DeliveryRecord]) -> [PostgresValue] {
        [
            .uuidArray(records.map(\.key.notificationID)),
            .timestampArray(records.map(\.key.createdAt)),
            .textArray(records.map(\.app)),
            .textArray(records.map { $0.platform?.rawValue ?? "none" }),
            .textArray(records.map(\.key.token)),
            .textArray(records.map(\.status.rawValue)),
            .intArray(records.map { Int64($0.attempts) }),
            .intArray(records.map { $0.providerStatus.map(Int64.init) }),
            .textArray(records.map { $0.providerReason?.storableText }),
            .textArray(records.map { $0.providerMessageID?.storableText }),
            .textArray(records.map { $0.detail?.storableText }),
            .timestampArray(records.map(\.enqueuedAt)),
            .timestampArray(records.map(\.firstAttemptAt)),
            .timestampArray(records.map(\.lastAttemptAt)),
            .timestampArray(records.map(\.acceptedAt)),
            .timestampArray(records.map(\.finalAt)),
            .textArray(records.map(\.campaign)),
        ]
    }

    static func attemptBinds(_ attempts: [AttemptRecord], worker: String) -> [PostgresValue] {
        [
            .uuidArray(attempts.map(\.key.notificationID)),
            .timestampArray(attempts.map(\.key.createdAt)),
            .textArray(attempts.map(\.key.token)),
            .intArray(attempts.map { Int64($0.attempt) }),
            .timestampArray(attempts.map(\.attemptedAt)),
            .textArray(attempts.map(\.outcome)),
            .textArray(attempts.map(\.provider.rawValue)),
            .intArray(attempts.map { $0.providerStatus.map(Int64.init) }),
            .textArray(attempts.map { $0.providerReason?.storableText }),
            .doubleArray(attempts.map(\.latencyMilliseconds)),
            .textArray(attempts.map(\.tier)),
            .textArray(attempts.map(\.campaign)),
            .text(worker.storableText),
        ]
    }
}
