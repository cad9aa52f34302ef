import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Token hygiene: a device not seen for `registry.stale_after_days` is left
/// out of user-id fan-out (a user with only such devices gets a row saying
/// so), and `pushfleet maintain` removes one not seen for
/// `registry.remove_after_days`. Real PostgreSQL.
final class StaleDeviceTests: XCTestCase {
    static let app = RecipientResolutionTests.app

    func register(_ token: String, user: String, daysAgo: Double) -> DeviceEvent {
        DeviceEvent(app: Self.app, platform: .ios, token: token, userID: user, environment: "production", action: .register,
                    at: Date().addingTimeInterval(-daysAgo * 86_400))
    }

    func pipeline(_ pool: PostgresPool, staleAfterDays: Int) throws -> BatchPipeline {
        var settings = WorkerConfiguration.Registry()
        settings.staleAfterDays = staleAfterDays
        let configuration = WorkerConfiguration()
        return BatchPipeline(
            stores: WorkerStores(pool: pool, logger: MigratedDatabase.logger, registry: settings),
            router: try ProviderRouter(configuration: configuration, logger: MigratedDatabase.logger), producer: nil, permits: nil,
            topics: TopicNames(), retryPolicy: configuration.retry.policy, maxConcurrentSends: 8, counters: Locked(WorkerCounters()),
            observer: NoWorkerObserver(), logger: MigratedDatabase.logger)
    }

    func testStaleDevicesAreLeftOutOfFanOutAndAUserWithOnlyThoseIsRecorded() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(BatchOutcome(deviceUpdates: [
            register("mixed-fresh", user: "mixed", daysAgo: 29), register("mixed-stale", user: "mixed", daysAgo: 31),
            register("old-1", user: "old", daysAgo: 45), register("old-2", user: "old", daysAgo: 200),
            // Registered 60 days ago and again yesterday: seen yesterday.
            register("renewed", user: "renewed", daysAgo: 60), register("renewed", user: "renewed", daysAgo: 1),
        ]))
        let id = UUID()
        let message = RecipientResolutionTests.message(RecipientResolutionTests.notification(
            id: id, recipients: #"{"user_id": "mixed"}, {"user_id": "old"}, {"user_id": "renewed"}, {"user_id": "nobody"}"#), offset: 0)

        let outcome = try await pipeline(pool, staleAfterDays: 30).outcome(of: [message])
        let byToken = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, $0) })
        XCTAssertEqual(Set(byToken.keys), ["mixed-fresh", "user:old", "renewed", "user:nobody"])
        XCTAssertEqual(byToken["user:old"]?.providerReason, "StaleDevicesOnly")
        XCTAssertEqual(byToken["user:old"]?.status, .rejected)
        XCTAssertEqual(byToken["user:old"]?.detail, "not sent: user old has 2 valid devices in app \(Self.app), "
                       + "none seen or registered again in the last 30 days (registry.stale_after_days)")
        XCTAssertEqual(byToken["user:nobody"]?.providerReason, "NoValidDevices")

        // 0: nothing is ever stale.
        let all = try await pipeline(pool, staleAfterDays: 0).outcome(of: [message])
        XCTAssertEqual(Set(all.deliveries.map(\.key.token)), ["mixed-fresh", "mixed-stale", "old-1", "old-2", "renewed", "user:nobody"])
    }

    func testMaintainRemovesDevicesNotSeenForTheLongerLimit() async throws {
        let db = try await MigratedDatabase.make()
        try await db.connection.query(
            """
            INSERT INTO devices (app, platform, token, user_id, registered_at, last_seen_at, invalidated_at, invalid_reason) VALUES
              ('a', 'ios', 'seen-269', 'u', now() - interval '269 days', now() - interval '269 days', NULL, NULL),
              ('a', 'ios', 'seen-271', 'u', now() - interval '271 days', now() - interval '271 days', NULL, NULL),
              ('a', 'ios', 'seen-400-dead', 'u', now() - interval '400 days', now() - interval '400 days', now() - interval '300 days', 'Unregistered'),
              ('a', 'ios', 'seen-400-dead-lately', 'u', now() - interval '400 days', now() - interval '400 days', now() - interval '3 days', 'Unregistered')
            """)
        let wouldRemove = try await DeviceUpkeep.removeUnseen(days: 270, dryRun: true, on: db.connection)
        XCTAssertEqual(wouldRemove, 2)
        let all = try await db.row("SELECT count(*) AS n FROM devices")
        XCTAssertEqual(all["n"], "4", "a dry run removes nothing")
        let removed = try await DeviceUpkeep.removeUnseen(days: 270, dryRun: false, on: db.connection)
        XCTAssertEqual(removed, 2)
        let left = try await db.connection.query("SELECT token FROM devices ORDER BY token").rows.compactMap { $0["token"] }
        XCTAssertEqual(left, ["seen-269", "seen-400-dead-lately"])
        let again = try await DeviceUpkeep.removeUnseen(days: 270, dryRun: false, on: db.connection)
        XCTAssertEqual(again, 0)
    }

    func testTheLimitsAreConfiguredUnderRegistry() throws {
        func load(_ registry: String) throws -> WorkerConfiguration.Registry {
            var configuration = WorkerConfiguration()
            try configuration.apply(try JSONValue.parse(Array(#"{"registry": \#(registry)}"#.utf8)))
            return configuration.registry
        }
        XCTAssertEqual(try load("{}").staleAfterDays, 30)
        XCTAssertEqual(try load("{}").removeAfterDays, 270)
        XCTAssertEqual(try load(#"{"stale_after_days": 45, "remove_after_days": 90}"#).staleAfter, .seconds(45 * 86_400))
        XCTAssertNil(try load(#"{"stale_after_days": 0}"#).staleAfter)
        for bad in [#"{"stale_after_days": -1}"#, #"{"remove_after_days": 4000}"#, #"{"stale_after_days": 60, "remove_after_days": 30}"#] {
            XCTAssertThrowsError(try load(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("registry."), "\(error)")
            }
        }
    }
}
