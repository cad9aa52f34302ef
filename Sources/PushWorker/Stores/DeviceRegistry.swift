import Foundation
import PushCore
import PushPostgres

/// The device registry as the batch reads it: which valid devices a user id
/// has (counted first, then loaded up to what the fan-out planned), and what
/// the registry says about a token named directly (sandbox, invalid), through
/// a short-lived cache shared with `OutcomeWriter`, which drops the tokens it
/// changes. One query per part for each question, none when it has none.
///
/// A user's device is stale when it was not seen (registered or registered
/// again, `last_seen_at`) for `staleAfter` (`registry.stale_after_days`):
/// user-id fan-out leaves it out, as FCM asks of tokens inactive for a month.
/// A token named directly is sent to whatever its age.
final class DeviceRegistry: Sendable {
    private let pool: PostgresPool
    private let cache: TokenRegistryCache
    /// How long a device may go unseen before fan-out leaves it out; nil: never.
    let staleAfter: Duration?

    init(pool: PostgresPool, cache: TokenRegistryCache, staleAfter: Duration? = WorkerConfiguration.Registry().staleAfter) {
        self.pool = pool
        self.cache = cache
        self.staleAfter = staleAfter
    }

    /// The oldest `last_seen_at` a device user-id fan-out takes may have (NULL: any).
    private func seenSince(_ now: Date = Date()) -> PostgresValue {
        guard let staleAfter else { return .null }
        return .timestamp(now.addingTimeInterval(-staleAfter.seconds))
    }

    /// A device a user id resolved to.
    struct UserDevice: Sendable, Hashable {
        var token: String
        var platform: Platform
        /// `production` or `sandbox` (APNs host).
        var environment: String = "production"
        /// A browser subscription's keys (`platform == .web`).
        var webKeys: WebPushKeys?

        /// The recipient a notification to the user sends to.
        var recipient: Recipient {
            guard platform == .web, let webKeys else { return Recipient(token: token, platform: platform) }
            return Recipient(endpoint: token, keys: webKeys)
        }
    }

    /// What the registry says about each of `tokens` that it has as sandbox or
    /// as invalid, through the worker's short-lived cache: only tokens not
    /// seen within `registry.cache_seconds` are asked about.
    func tokenStates(_ tokens: Set<AppToken>) async throws -> [AppToken: TokenRegistryState] {
        guard !tokens.isEmpty else { return [:] }
        var (known, missing) = cache.split(tokens)
        guard !missing.isEmpty else { return known }
        let asked = try await queryTokenStates(missing.map(\.token))
        cache.remember(asked: missing, states: asked)
        known.merge(asked) { _, new in new }
        return known
    }

    /// What the registry says about each of `tokens` that it has as sandbox
    /// or as invalid, in one query for the whole batch. A token absent from
    /// the result is valid as far as the registry knows, and production (where
    /// App Store builds live).
    private func queryTokenStates(_ tokens: [AppToken]) async throws -> [AppToken: TokenRegistryState] {
        guard !tokens.isEmpty else { return [:] }
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                prepared: """
                SELECT d.app AS a, d.platform AS p, d.token AS t, d.environment AS e,
                       (d.invalidated_at IS NOT NULL)::int AS x
                FROM unnest($1::text[], $2::text[], $3::text[]) AS k(a, p, t)
                CROSS JOIN LATERAL (
                    SELECT app, platform, token, environment, invalidated_at FROM devices
                    WHERE app = k.a AND platform = k.p AND token = k.t
                    LIMIT 1  -- the unique key: one probe per token, whatever plan
                ) d
                WHERE d.environment = 'sandbox' OR d.invalidated_at IS NOT NULL
                """,
                [.textArray(tokens.map(\.app)), .textArray(tokens.map(\.platform.rawValue)), .textArray(tokens.map(\.token))])
        }
        var result: [AppToken: TokenRegistryState] = [:]
        for row in rows.rows {
            guard let a = row["a"], let t = row["t"], let p = row["p"].flatMap(Platform.init(rawValue:)) else { continue }
            result[AppToken(app: a, platform: p, token: t)] = TokenRegistryState(sandbox: row["e"] == "sandbox", invalid: row["x"] == "1")
        }
        return result
    }

    /// How many valid (not invalidated), not stale devices each (app, user
    /// id) has, counted only to `maxDevicesPerUser + 1` (an index range scan
    /// that stops there); users with none are absent. One query for the whole
    /// batch: what `UserFanOut` plans with before any device is loaded.
    func deviceCounts(of users: Set<AppUser>) async throws -> [AppUser: Int] {
        guard !users.isEmpty else { return [:] }
        let pairs = Array(users)
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT a, u, n FROM (
                    SELECT x.a AS a, x.u AS u, (SELECT count(*) FROM (
                               SELECT 1 FROM devices c
                                WHERE c.app = x.a AND c.user_id = x.u AND c.invalidated_at IS NULL
                                  AND ($4::timestamptz IS NULL OR c.last_seen_at >= $4::timestamptz)
                                LIMIT $3 + 1) l) AS n
                      FROM (SELECT DISTINCT a, u FROM unnest($1::text[], $2::text[]) AS y(a, u)) x) k
                 WHERE n > 0
                """,
                [.textArray(pairs.map(\.app)), .textArray(pairs.map(\.userID)), .int(Int64(UserFanOut.maxDevicesPerUser)),
                 seenSince()])
        }
        var result: [AppUser: Int] = [:]
        for row in rows.rows {
            guard let a = row["a"], let u = row["u"], let n = row["n"].flatMap({ Int($0) }) else { continue }
            result[AppUser(app: a, userID: u)] = n
        }
        return result
    }

    /// The valid devices of each (app, user id), in one query for the whole
    /// batch: at most the number given for the user (what `UserFanOut`
    /// planned with, so devices registered since the count cannot take a
    /// message past its budget), and never more than `maxDevicesPerUser`: the
    /// most recently registered. The registry takes any number of devices per
    /// user, and a notification to a user with ten million would otherwise
    /// load them all into the worker, which would run out of memory on that
    /// message, restart and read it again.
    func devices(of users: [AppUser: Int]) async throws -> [AppUser: [UserDevice]] {
        guard !users.isEmpty else { return [:] }
        let pairs = Array(users)
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT k.a AS a, k.u AS u, d.platform AS p, d.token AS t, d.environment AS e,
                       d.web_p256dh AS k, d.web_auth AS s
                FROM unnest($1::text[], $2::text[], $3::int8[]) AS k(a, u, n)
                CROSS JOIN LATERAL (
                    SELECT platform, token, environment, web_p256dh, web_auth FROM devices
                     WHERE app = k.a AND user_id = k.u AND invalidated_at IS NULL
                       AND ($5::timestamptz IS NULL OR last_seen_at >= $5::timestamptz)
                     ORDER BY registered_at DESC NULLS LAST, token
                     LIMIT least(k.n, $4)) d
                ORDER BY k.a, k.u, d.platform, d.token
                """,
                [.textArray(pairs.map(\.key.app)), .textArray(pairs.map(\.key.userID)),
                 .intArray(pairs.map { Int64(max(0, $0.value)) }), .int(Int64(UserFanOut.maxDevicesPerUser)), seenSince()])
        }
        var result: [AppUser: [UserDevice]] = [:]
        for row in rows.rows {
            guard let a = row["a"], let u = row["u"], let t = row["t"], let p = row["p"].flatMap(Platform.init(rawValue:)) else { continue }
            var device = UserDevice(token: t, platform: p, environment: row["e"] ?? "production")
            if p == .web, let k = row["k"], let s = row["s"] { device.webKeys = WebPushKeys(p256dh: k, auth: s) }
            result[AppUser(app: a, userID: u), default: []].append(device)
        }
        return result
    }

    /// How many valid devices each of `users` has that are all stale (not
    /// seen for `staleAfter`): asked only of users fan-out found no device
    /// for, so their rows say why. Users with none are absent; always empty
    /// when nothing is ever stale.
    func staleDeviceCounts(of users: Set<AppUser>) async throws -> [AppUser: Int] {
        guard staleAfter != nil, !users.isEmpty else { return [:] }
        let pairs = Array(users)
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT x.a AS a, x.u AS u, count(*) AS n
                  FROM (SELECT DISTINCT a, u FROM unnest($1::text[], $2::text[]) AS y(a, u)) x
                  JOIN devices c ON c.app = x.a AND c.user_id = x.u AND c.invalidated_at IS NULL
                 WHERE c.last_seen_at < $3::timestamptz
                 GROUP BY 1, 2
                """,
                [.textArray(pairs.map(\.app)), .textArray(pairs.map(\.userID)), seenSince()])
        }
        var result: [AppUser: Int] = [:]
        for row in rows.rows {
            guard let a = row["a"], let u = row["u"], let n = row["n"].flatMap({ Int($0) }) else { continue }
            result[AppUser(app: a, userID: u)] = n
        }
        return result
    }
}

/// A device token of an app, as the registry keys it.
struct AppToken: Sendable, Hashable {
    var app: String
    var platform: Platform
    var token: String
}
