import Foundation
import PushCore
import PushPostgres
import XCTest
@testable import PushAnalytics
@testable import PushWorker

/// `pushfleet maintain`: the pure plan, then a real run against PostgreSQL.
final class AnalyticsPartitionTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_795_774_400)  // 2026-11-27T10:13:20Z

    func testPlanCreatesTodayAndAheadAndDropsWholeDaysPastRetention() {
        let plan = PartitionPlan(
            existing: ["deliveries_20261026", "deliveries_20261027", "deliveries_20261028", "delivery_attempt_log_20261027",
                       "deliveries_default", "deliveries_2026", "deliveries_20261399", "other_20261001"],
            now: now, daysAhead: 2, retentionDays: 30)
        XCTAssertEqual(plan.ensureDays.map(\.suffix), ["20261127", "20261128", "20261129"])
        // Cutoff 2026-10-28T10:13:20Z: the 27th ended at 28T00:00 (dropped), the 28th has not ended before the cutoff.
        XCTAssertEqual(plan.drop, ["deliveries_20261026", "deliveries_20261027", "delivery_attempt_log_20261027"])
    }

    func testDayParsing() throws {
        let parsed = try XCTUnwrap(PartitionDay.parse(partition: "delivery_attempt_log_20240229"))
        XCTAssertEqual(parsed.parent, "delivery_attempt_log")
        XCTAssertEqual(parsed.day.description, "2024-02-29")
        XCTAssertNil(PartitionDay.parse(partition: "deliveries_20230229"))
        XCTAssertNil(PartitionDay.parse(partition: "deliveries_default"))
        XCTAssertEqual(PartitionDay(containing: Date(timeIntervalSince1970: -1)).description, "1969-12-31")
    }

    func testMaintenanceCreatesAheadAndDetachesAndDropsOldPartitions() async throws {
        let db = try await AnalyticsDatabase.make()
        let today = PartitionDay(containing: Date())
        let old = today.adding(-40)
        try await db.connection.query("SELECT pushfleet_ensure_partitions($1::date, 2)", [.text(old.description)])
        try await db.connection.query(
            "INSERT INTO delivery_receipts (notification_id, token, kind, app, platform, at) VALUES (gen_random_uuid(), 't', 'delivered', 'a', 'ios', $1)",
            [.timestamp(old.start.addingTimeInterval(60))])
        // An id filed 40 days ago goes with its partitions; one filed today stays.
        try await db.connection.query(
            "INSERT INTO notification_ids (notification_id, created_at) VALUES (gen_random_uuid(), $1), (gen_random_uuid(), now())",
            [.timestamp(old.start.addingTimeInterval(60))])
        let maintenance = PartitionMaintenance(connection: db.connection, logger: AnalyticsDatabase.logger)

        let dry = try await maintenance.run(daysAhead: 12, retentionDays: 30, dryRun: true)
        let oldNames = ["deliveries", "delivery_attempt_log"].flatMap { p in [old, old.adding(1)].map { "\(p)_\($0.suffix)" } }.sorted()
        XCTAssertEqual(dry.dropped, oldNames)
        XCTAssertEqual(dry.receiptsDeleted, 1)
        XCTAssertEqual(dry.notificationIDsDeleted, 1)
        // 0001 created today-2 … today+7; 12 days ahead needs today+8 … today+12 for both tables.
        let ahead = (8...12).flatMap { d in ["deliveries", "delivery_attempt_log"].map { "\($0)_\(today.adding(d).suffix)" } }
        XCTAssertEqual(Set(dry.created), Set(ahead))
        var existing = try await maintenance.existingPartitions()
        XCTAssertTrue(Set(oldNames).isSubset(of: existing), "a dry run changes nothing")

        let done = try await maintenance.run(daysAhead: 12, retentionDays: 30, dryRun: false)
        XCTAssertEqual(done.dropped, oldNames)
        XCTAssertEqual(Set(done.created), Set(ahead))
        XCTAssertEqual(done.receiptsDeleted, 1)
        XCTAssertEqual(done.notificationIDsDeleted, 1)
        let kept = try await db.row("SELECT count(*) AS n FROM notification_ids")
        XCTAssertEqual(kept["n"], "1", "today's id is kept")
        existing = try await maintenance.existingPartitions()
        XCTAssertTrue(Set(oldNames).isDisjoint(with: existing))
        XCTAssertTrue(Set(ahead).isSubset(of: existing))
        let tables = try await db.row("SELECT count(*) AS n FROM pg_tables WHERE schemaname = $1 AND tablename = ANY($2::text[])",
                                      [.text(db.schema), .textArray(oldNames)])
        XCTAssertEqual(tables["n"], "0", "detached and dropped, not just detached")
        let again = try await maintenance.run(daysAhead: 12, retentionDays: 30, dryRun: false)
        XCTAssertEqual(again, PartitionMaintenance.Report(), "a second run has nothing to do")
    }
}
