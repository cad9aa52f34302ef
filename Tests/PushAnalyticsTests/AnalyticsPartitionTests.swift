import Foundation
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushAnalytics

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
        let db = try await MigratedDatabase.make()
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
        let maintenance = PartitionMaintenance(connection: db.connection, logger: MigratedDatabase.logger)

        let dry = try await maintenance.run(daysAhead: 12, retentionDays: 30, dryRun: true)
        let oldNames = ["deliveries", "delivery_attempt_log"].flatMap { p in [old, old.adding(1)].map { "\(p)_\($0.suffix)" } }.sorted()
        XCTAssertEqual(dry.dropped, oldNames)
        XCTAssertEqual(dry.receiptsDeleted, 1)
        XCTAssertEqual(dry.notificationIDsDeleted, 1)
        XCTAssertEqual(dry.analyzed, [], "a dry run analyzes nothing")
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
        XCTAssertEqual(done.analyzed, ["deliveries"])
        let kept = try await db.row("SELECT count(*) AS n FROM notification_ids")
        XCTAssertEqual(kept["n"], "1", "today's id is kept")
        existing = try await maintenance.existingPartitions()
        XCTAssertTrue(Set(oldNames).isDisjoint(with: existing))
        XCTAssertTrue(Set(ahead).isSubset(of: existing))
        let tables = try await db.row("SELECT count(*) AS n FROM pg_tables WHERE schemaname = $1 AND tablename = ANY($2::text[])",
                                      [.text(db.schema), .textArray(oldNames)])
        XCTAssertEqual(tables["n"], "0", "detached and dropped, not just detached")
        let again = try await maintenance.run(daysAhead: 12, retentionDays: 30, dryRun: false)
        XCTAssertEqual(again, PartitionMaintenance.Report(analyzed: ["deliveries"]), "a second run has nothing to do but analyze")
    }

    /// Migrations 0014 and 0015: the hourly views group through statistics of the
    /// partitioned table as a whole, which only an ANALYZE of that table
    /// gathers: `maintain` runs it, and the planner then expects an hour's few
    /// (hour, app, platform) groups instead of one per row.
    func testMaintenanceGathersTheHourlyGroupStatistics() async throws {
        let db = try await MigratedDatabase.make()
        // 6,000 rows over three hours, two apps, two platforms: 12 groups.
        try await db.connection.query(
            """
            INSERT INTO deliveries (notification_id, created_at, app, platform, token, status, attempts, enqueued_at, accepted_at)
            SELECT gen_random_uuid(), c, 'app' || (i % 2), CASE WHEN i % 3 = 0 THEN 'ios' ELSE 'android' END, 't' || i,
                   'accepted', 1, c, c + interval '1 s'
            FROM (SELECT i, date_trunc('hour', now()) - interval '3 hours' + i * interval '1.8 s' AS c
                  FROM generate_series(0, 5999) AS i) g
            """)
        let funnel = "SELECT * FROM delivery_funnel_hourly WHERE hour >= now() - interval '6 hours'"
        func groupsExpected() async throws -> Double {
            let plan = try await db.connection.query("EXPLAIN (FORMAT JSON) \(funnel)")
            let json = try XCTUnwrap(plan.rows.first?[0]?.data(using: .utf8))
            let top = try XCTUnwrap((try JSONSerialization.jsonObject(with: json) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            return try XCTUnwrap(top["Plan Rows"] as? Double)
        }
        let stats = "SELECT count(*) AS n FROM pg_stats_ext WHERE schemaname = $1 AND statistics_name = $2 AND n_distinct IS NOT NULL"
        let before = try await db.row(stats, [.text(db.schema), .text("deliveries_created_utc_hour_groups")])
        XCTAssertEqual(before["n"], "0", "not gathered yet: the rows came after the migration's ANALYZE")
        let guessed = try await groupsExpected()
        XCTAssertGreaterThan(guessed, 100, "without the statistics the planner expects a group per few rows")

        let report = try await PartitionMaintenance(connection: db.connection, logger: MigratedDatabase.logger)
            .run(daysAhead: 7, retentionDays: 30, dryRun: false)
        XCTAssertEqual(report.analyzed, ["deliveries"])
        for name in ["deliveries_created_utc_hour_groups", "deliveries_accepted_utc_hour_groups"] {
            let after = try await db.row(stats, [.text(db.schema), .text(name)])
            XCTAssertEqual(after["n"], "1", name)
        }
        let known = try await groupsExpected()
        XCTAssertLessThanOrEqual(known, 24, "12 groups in the table; planned \(known)")
        let rows = try await db.connection.query(funnel)
        XCTAssertEqual(rows.count, 12)
    }
}
