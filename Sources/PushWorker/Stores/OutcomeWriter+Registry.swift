import Foundation
import PushCore
import PushPostgres

/// The registry writes of an outcome transaction: device events from the
/// devices topic, and tokens a provider said are dead.
extension OutcomeWriter {
    /// Applies registry messages with two batched statements. `registered_at`
    /// is the latest registration (what the APNs 410 rule compares against),
    /// `first_registered_at` the first; a registration newer than the
    /// invalidation makes the token valid again; an unregistration newer than
    /// the latest registration invalidates it with reason `unregistered`.
    /// Order-independent: replays and reordered messages end in the same state.
    static func applyDeviceEvents(_ events: [DeviceEvent], on c: PostgresConnection) async throws {
        let registers = events.filter { $0.action == .register }
        let unregisters = events.filter { $0.action == .unregister }
        func binds(_ e: [DeviceEvent]) -> [PostgresValue] {
            [.textArray(e.map(\.app)), .textArray(e.map(\.platform.rawValue)), .textArray(e.map(\.token)),
             .textArray(e.map(\.userID)), .textArray(e.map(\.environment)), .timestampArray(e.map(\.at)),
             .textArray(e.map(\.webKeys?.p256dh)), .textArray(e.map(\.webKeys?.auth))]
        }
        if !registers.isEmpty {
            try await c.query(
                """
                INSERT INTO devices AS d (app, platform, token, user_id, environment, registered_at, first_registered_at, last_seen_at,
                                          web_p256dh, web_auth)
                SELECT DISTINCT ON (a, p, t) a, p, t, u, e, w, w, w, k, s
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[])
                     AS x(a, p, t, u, e, w, k, s)
                ORDER BY a, p, t, w DESC
                ON CONFLICT (app, platform, token) DO UPDATE SET
                    user_id = CASE WHEN EXCLUDED.registered_at >= d.registered_at THEN EXCLUDED.user_id ELSE d.user_id END,
                    web_p256dh = CASE WHEN EXCLUDED.registered_at >= d.registered_at THEN EXCLUDED.web_p256dh ELSE d.web_p256dh END,
                    web_auth = CASE WHEN EXCLUDED.registered_at >= d.registered_at THEN EXCLUDED.web_auth ELSE d.web_auth END,
                    environment = CASE WHEN EXCLUDED.registered_at >= d.registered_at THEN EXCLUDED.environment ELSE d.environment END,
                    registered_at = GREATEST(d.registered_at, EXCLUDED.registered_at),
                    first_registered_at = LEAST(d.first_registered_at, d.registered_at, EXCLUDED.registered_at),
                    last_seen_at = GREATEST(d.last_seen_at, EXCLUDED.last_seen_at),
                    invalid_reason = CASE WHEN COALESCE(d.provider_invalid_since, d.invalidated_at) < EXCLUDED.registered_at
                                          THEN NULL ELSE d.invalid_reason END,
                    provider_invalid_since = CASE WHEN COALESCE(d.provider_invalid_since, d.invalidated_at) < EXCLUDED.registered_at
                                                  THEN NULL ELSE d.provider_invalid_since END,
                    invalidated_at = CASE WHEN COALESCE(d.provider_invalid_since, d.invalidated_at) < EXCLUDED.registered_at
                                          THEN NULL ELSE d.invalidated_at END
                """, binds(registers))
        }
        if !unregisters.isEmpty {
            try await c.query(
                """
                INSERT INTO devices AS d (app, platform, token, user_id, environment, registered_at, first_registered_at,
                                          last_seen_at, invalidated_at, invalid_reason, web_p256dh, web_auth)
                SELECT DISTINCT ON (a, p, t) a, p, t, u, e, w, w, w, w, 'unregistered', k, s
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[])
                     AS x(a, p, t, u, e, w, k, s)
                ORDER BY a, p, t, w DESC
                ON CONFLICT (app, platform, token) DO UPDATE SET
                    invalidated_at = EXCLUDED.invalidated_at, invalid_reason = 'unregistered'
                WHERE d.invalidated_at IS NULL AND d.registered_at <= EXCLUDED.invalidated_at
                """, binds(unregisters))
        }
    }

    /// Marks tokens invalid, unless the device registered again after the
    /// time the provider says the token died (APNs 410 timestamp rule).
    /// `invalidated_at` is when we learnt it, `provider_invalid_since` what the
    /// provider said (the views count by the former, the revive rule uses the latter).
    static func invalidate(_ items: [TokenInvalidation], on c: PostgresConnection) async throws {
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
}
