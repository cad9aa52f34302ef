import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// The device registry in real PostgreSQL: registration times, re-registration
/// after invalidation, unregistration, and the APNs 410 timestamp rule, all
/// through the worker's own statements (`OutcomeWriter.write`).
final class DeviceRegistryTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))
    let app = "com.example.registry"

    private func event(_ token: String, _ action: DeviceEvent.Action, at seconds: Double, user: String? = "u1") -> DeviceEvent {
        DeviceEvent(app: app, platform: .ios, token: token, userID: user, environment: "production", action: action,
                    at: t0.addingTimeInterval(seconds))
    }

    private func state(_ db: MigratedDatabase, _ token: String) async throws
        -> (registered: Date?, first: Date?, invalidated: Date?, reason: String?, user: String?, providerSince: Date?)
    {
        let rows = try await db.connection.query(
            """
            SELECT registered_at, first_registered_at, invalidated_at, invalid_reason, user_id, provider_invalid_since
            FROM devices WHERE app = $1 AND token = $2
            """,
            [.text(app), .text(token)])
        let row = try XCTUnwrap(rows.first)
        return (try row.date("registered_at"), try row.date("first_registered_at"), try row.date("invalidated_at"),
                row["invalid_reason"], row["user_id"], try row.date("provider_invalid_since"))
    }

    /// A provider's "this token is dead since `since`", learnt at `learned` (seconds after t0).
    private func dead(_ token: String, since: Double, learned: Double = 1_000) -> TokenInvalidation {
        TokenInvalidation(app: app, platform: .ios, token: token, since: t0.addingTimeInterval(since), reason: "Unregistered",
                          learnedAt: t0.addingTimeInterval(learned))
    }

    func testRegisteredAtIsTheLatestRegistrationAndFirstIsKeptInAnyOrder() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 100, user: "new")]))
        // An older registration arrives later (replay, reordering): it moves nothing forward.
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 10, user: "old")]))
        let s = try await state(db, "tok")
        XCTAssertEqual(s.registered, t0.addingTimeInterval(100))
        XCTAssertEqual(s.first, t0.addingTimeInterval(10))
        XCTAssertEqual(s.user, "new", "the latest registration's user")
        XCTAssertNil(s.invalidated)
        await pool.close()
    }

    func testAPNs410OlderThanTheLatestRegistrationDoesNotInvalidate() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 0), event("tok", .register, at: 200)]))
        // APNs says the token died at t0+100: the app registered it again at t0+200.
        try await store.writer.write(BatchOutcome(invalidations: [dead("tok", since: 100)]))
        var s = try await state(db, "tok")
        XCTAssertNil(s.invalidated, "a 410 older than the latest registration must not invalidate")
        // A 410 newer than the registration does.
        try await store.writer.write(BatchOutcome(invalidations: [dead("tok", since: 300)]))
        s = try await state(db, "tok")
        XCTAssertEqual(s.invalidated, t0.addingTimeInterval(1_000), "invalidated_at is when the worker learnt it")
        XCTAssertEqual(s.providerSince, t0.addingTimeInterval(300), "provider_invalid_since is what APNs said")
        XCTAssertEqual(s.reason, "Unregistered")
        await pool.close()
    }

    func testReRegistrationAfterInvalidationRevalidatesAndUnregisterInvalidates() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 0)]))
        try await store.writer.write(BatchOutcome(invalidations: [dead("tok", since: 50, learned: 500)]))
        // A registration OLDER than the provider's time leaves it invalid …
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 40)]))
        var s = try await state(db, "tok")
        XCTAssertEqual(s.invalidated, t0.addingTimeInterval(500))
        XCTAssertEqual(s.providerSince, t0.addingTimeInterval(50))
        // … a newer one (than what the provider said, even if older than when we learnt it) makes it valid again.
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .register, at: 60)]))
        s = try await state(db, "tok")
        XCTAssertNil(s.invalidated)
        XCTAssertNil(s.reason)
        XCTAssertNil(s.providerSince)
        XCTAssertEqual(s.registered, t0.addingTimeInterval(60))

        // Unregister older than the latest registration: ignored. Newer: invalidates.
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .unregister, at: 55)]))
        s = try await state(db, "tok")
        XCTAssertNil(s.invalidated)
        // Register and a later unregister in ONE batch: the unregistration wins, whatever the order.
        try await store.writer.write(BatchOutcome(deviceUpdates: [event("tok", .unregister, at: 80), event("tok", .register, at: 70)]))
        s = try await state(db, "tok")
        XCTAssertEqual(s.invalidated, t0.addingTimeInterval(80))
        XCTAssertEqual(s.reason, "unregistered")
        XCTAssertEqual(s.registered, t0.addingTimeInterval(70))
        await pool.close()
    }

    /// Issue 16 item 2: an APNs 410 whose timestamp is weeks old is still an
    /// invalidation learnt today, and `tokens_invalidated_daily` shows it today.
    func testAnOld410TimestampCountsOnTheDayItWasLearnt() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let now = Date()
        let oldSince = now.addingTimeInterval(-40 * 86_400)
        try await store.writer.write(BatchOutcome(invalidations: (0..<3).map {
            TokenInvalidation(app: app, platform: .ios, token: "old\($0)", since: oldSince, reason: "Unregistered", learnedAt: now)
        }))
        let rows = try await db.connection.query(
            """
            SELECT coalesce(sum(tokens), 0)::bigint AS n FROM tokens_invalidated_daily
            WHERE app = $1 AND day = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
            """, [.text(app)])
        XCTAssertEqual(try rows.first?.int("n"), 3, "today's view must count invalidations learnt today")
        let s = try await state(db, "old0")
        XCTAssertEqual(try XCTUnwrap(s.providerSince).timeIntervalSince1970, oldSince.timeIntervalSince1970, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(s.invalidated).timeIntervalSince1970, now.timeIntervalSince1970, accuracy: 0.001)
        await pool.close()
    }
}
