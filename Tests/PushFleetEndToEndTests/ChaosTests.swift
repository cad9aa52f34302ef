import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest

/// Issue 4's proof: 20,000 notifications, three worker processes; one is
/// killed with SIGKILL mid-run (and a replacement started), a broker goes
/// down for five seconds, PostgreSQL is restarted, and another worker is
/// stopped with SIGTERM. Every (notification, device) must end final exactly
/// once, nothing lost, and duplicate sends stay within what one killed
/// worker can have in flight.
final class ChaosTests: XCTestCase {
    func testKillRebalanceBrokerAndDatabaseFaultsLoseNothing() async throws {
        var logger = Logger(label: "e2e.chaos")
        logger.logLevel = .warning
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        do {
            let notifications = 20_000
            let started = ContinuousClock.now
            // About 1.15 devices per notification.
            let summary = try await TestEnvironment.runDemo(binary, database: database, deliveries: notifications * 6 / 5, extra: [
                "--notifications", "\(notifications)", "--workers", "3", "--chaos", "--retry-delay-ms", "500",
            ])
            XCTAssertEqual(summary["passed"], .bool(true))
            XCTAssertEqual(summary.int("missing_deliveries"), 0, "lost deliveries")
            if case .array(let chaos)? = summary["chaos"] {
                XCTAssertTrue(chaos.contains { $0.stringValue?.contains("SIGKILL") == true }, "\(chaos)")
                XCTAssertTrue(chaos.contains { $0.stringValue?.contains("PostgreSQL restarted") == true }, "\(chaos)")
                XCTAssertTrue(chaos.contains { $0.stringValue?.contains("broker 2 up again") == true }, "\(chaos)")
                XCTAssertTrue(chaos.contains { $0.stringValue?.contains("SIGTERM") == true }, "\(chaos)")
            } else {
                XCTFail("no chaos log in the summary")
            }

            let c = try await PostgresConnection.connect(url: database.url, logger: logger)
            defer { c.close() }
            let r = try await c.query(
                """
                SELECT (SELECT count(*) FROM deliveries) AS rows,
                       (SELECT count(*) FROM deliveries WHERE status IN ('pending', 'retrying')) AS unfinished,
                       (SELECT count(DISTINCT notification_id) FROM deliveries) AS notifications
                """).rows[0]
            let expectedRows = summary.counts("expected").values.reduce(0, +)
            XCTAssertEqual(r.count("rows"), expectedRows, "one ledger row per (notification, device), exactly once")
            XCTAssertEqual(r.count("unfinished"), 0)
            XCTAssertEqual(r.count("notifications"), notifications)

            // Duplicate sends: a killed worker can have at most its in-flight bound
            // (batch_size × max_batches_in_flight = 512 × 2 messages) sent without
            // the outcome reaching PostgreSQL. The simulator counts sends per apns-id.
            guard let duplicateIDs = summary.int("simulator_apns_duplicate_ids") else {
                return XCTFail("no simulator duplicate count in the summary")
            }
            XCTAssertLessThanOrEqual(duplicateIDs, 1024, "duplicate APNs sends beyond the in-flight bound")
            let seconds = (ContinuousClock.now - started).components.seconds
            print("chaos figures: notifications \(notifications), deliveries \(expectedRows), final rows \(r.count("rows") ?? -1), "
                  + "lost \(expectedRows - (r.count("rows") ?? 0) + (r.count("unfinished") ?? 0)), "
                  + "duplicate apns-ids \(duplicateIDs), dead letters \(summary.counts("dead_letters").values.reduce(0, +)), \(seconds) s")
        } catch {
            await database.drop(logger: logger)
            throw error
        }
        await database.drop(logger: logger)
    }
}

import Logging
