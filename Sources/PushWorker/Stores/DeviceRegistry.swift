import Foundation
import PushCore
import PushPostgres

extension OutcomeStore {
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

    /// A device token of an app, as the registry keys it.
    struct AppToken: Sendable, Hashable {
        var app: String
        var platform: Platform
        var token: String
    }

    /// `registryStates`, through the worker's short-lived cache: only tokens
    /// not seen within `registry.cache_seconds` are asked about.
    func cachedRegistryStates(_ tokens: Set<AppToken>) async throws -> [AppToken: TokenRegistryState] {
        guard !tokens.isEmpty else { return [:] }
        var (known, missing) = registryCache.split(tokens)
        guard !missing.isEmpty else { return known }
        let asked = try await registryStates(missing.map(\.token))
        registryCache.remember(asked: missing, states: asked)
        known.merge(asked) { _, new in new }
        return known
    }

    /// What the registry says about each of `tokens` that it has as sandbox
    /// or as invalid, in one query for the whole batch. A token absent from
    /// the result is valid as far as the registry knows, and production (where
    /// App Store builds live).
    func registryStates(_ tokens: [AppToken]) async throws -> [AppToken: TokenRegistryState] {
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

    /// How many valid (not invalidated) devices each (app, user id) has,
    /// counted only to `maxDevicesPerUser + 1` (an index range scan that stops
    /// there); users with none are absent. One query for the whole batch: what
    /// `UserFanOut` plans with before any device is loaded.
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
                                LIMIT $3 + 1) l) AS n
                      FROM (SELECT DISTINCT a, u FROM unnest($1::text[], $2::text[]) AS y(a, u)) x) k
                 WHERE n > 0
                """,
                [.textArray(pairs.map(\.app)), .textArray(pairs.map(\.userID)), .int(Int64(Self.maxDevicesPerUser))])
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
                     ORDER BY registered_at DESC NULLS LAST, token
                     LIMIT least(k.n, $4)) d
                ORDER BY k.a, k.u, d.platform, d.token
                """,
                [.textArray(pairs.map(\.key.app)), .textArray(pairs.map(\.key.userID)),
                 .intArray(pairs.map { Int64(max(0, $0.value)) }), .int(Int64(Self.maxDevicesPerUser))])
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

    /// The most devices a notification to one user id is sent to.
    static let maxDevicesPerUser = 1_000

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
}

/// A user of an app, as a notification names it.
struct AppUser: Sendable, Hashable {
    var app: String
    var userID: String
}

/// Which user ids of a batch's messages are sent to. A message may name 1,000
/// user ids and each may have `OutcomeStore.maxDevicesPerUser` devices: a
/// million deliveries from one message, hundreds of millions in a batch. So
/// a message is sent to at most `maxDevicesPerMessage` devices through its
/// user ids: taken in the message's order, a user whose devices would take it
/// past that is not sent to (nor is any user after it), and gets a
/// `TooManyDevices` row instead. Only the users some message sends to are loaded.
struct UserFanOut {
    /// The most devices one message reaches through its user ids.
    static let maxDevicesPerMessage = 10_000

    /// The users whose devices are loaded, each with how many at most.
    var load: [AppUser: Int] = [:]
    /// Per message (index in the batch), the users left out for the budget.
    var cut: [Int: Set<String>] = [:]
    /// Per message (index in the batch), the devices it is sent to through its user ids,
    /// and through how many of them.
    var planned: [Int: (devices: Int, users: Int)] = [:]

    /// - Parameters:
    ///   - messages: each message's app and user ids, in the batch's order.
    ///   - counts: valid devices per user (absent: none), as `deviceCounts` gives them.
    init(_ messages: [(app: String, users: [String])], counts: [AppUser: Int], budget: Int = maxDevicesPerMessage) {
        for (index, message) in messages.enumerated() where !message.users.isEmpty {
            var used = 0
            var users = 0
            var over = false
            for user in message.users {
                let key = AppUser(app: message.app, userID: user)
                let count = min(counts[key] ?? 0, OutcomeStore.maxDevicesPerUser)
                guard count > 0 else { continue }  // recorded NoValidDevices, costs nothing
                if !over, used + count <= budget {
                    used += count
                    users += 1
                    load[key] = count
                } else {
                    over = true
                    cut[index, default: []].insert(user)
                }
            }
            if used > 0 { planned[index] = (used, users) }
        }
    }
}
