import Foundation
import PushTestSupport
import Logging
import PushCore
import PushPostgres
import PushTestSupport
import XCTest
import PushTestSupport

/// The fleet's drills on two brokers: librdkafka's mock cluster (with the
/// librdkafka the binary links) and Tansu, a real Kafka-compatible broker
/// (with a current librdkafka). Three workers; a wave of notifications is
/// delivered; one worker is killed with SIGKILL while its sends are in flight,
/// another stopped with SIGTERM, then two are started (scale 1 → 3). Device
/// events and receipts go through their topics. Asserts nothing lost, re-sends
/// within the in-flight bound, exit 0 on SIGTERM; prints the figures
/// (`broker drill:` lines) and how long moved partitions had no owner.
///
/// To try consumer settings: BROKER_DRILL_KAFKA_PROPERTIES='{"session.timeout.ms":"3000"}'
/// (added to the workers' kafka.properties), BROKER_DRILL_TIMELINE=1 (print every
/// rebalance from the kill on), BROKER_DRILL_LOG_LEVEL=debug with '{"debug":"cgrp"}'
/// and BROKER_DRILL_KEEP=1 (keep the workers' logs).
final class BrokerDrillTests: XCTestCase {
    func testDrillsOnTheMockCluster() async throws {
        try await drill(.mock)
    }

    func testDrillsOnTansu() async throws {
        try await drill(.tansu)
    }

    /// Every APNs answer waits this long, so a worker killed just after a wave is
    /// published dies with sends in flight (the ones its successor sends again).
    static let apnsDelayMilliseconds = 700
    /// Notifications per wave (four waves).
    static let wave = 150
    /// What a killed worker can have sent without its outcomes reaching PostgreSQL:
    /// its in-flight bound (batch_size × max_batches_in_flight = 512 × 2).
    static let inFlightBound = 1024

    private func drill(_ kind: BrokerUnderTest.Kind) async throws {
        try await BrokerFleet.run(on: kind, prefix: "drill") { try await run($0) }
    }

    private func run(_ fleet: BrokerFleet) async throws {
        let began = ContinuousClock.now
        let broker = fleet.broker
        let binary = fleet.binary
        try await fleet.start(apnsDelayMilliseconds: Self.apnsDelayMilliseconds)
        let library = try await broker.librdkafkaVersion(binary: binary)
        let topics = try XCTUnwrap(broker.topicsCreate)
        XCTAssertEqual(topics.status, 0, "topics create on \(broker.kind):\n\(topics.output)")

        // A device registered through the devices topic, for a notification addressed to its user.
        let userToken = String(repeating: "ab", count: 32)
        try await fleet.publish([#"""
            {"schema_version": 1, "app": "\#(BrokerFleet.app)", "platform": "ios", "token": "\#(userToken)", \#
            "user_id": "\#(BrokerFleet.user)", "action": "register", "at": "\#(ISO8601DateFormatter().string(from: Date()))"}
            """#], topic: "\(broker.prefix).devices")

        // Three workers; the first assignment is timed from each one's start.
        let started = try (0..<3).map { _ in try fleet.startWorker() }
        var firstAssignment: Double?
        let assignDeadline = ContinuousClock.now + .seconds(60)
        while firstAssignment == nil, ContinuousClock.now < assignDeadline {
            let events = fleet.rebalances()
            firstAssignment = started.compactMap { RebalanceTimeline.firstAssignment(events, worker: $0.name, started: $0.started) }.min()
            if firstAssignment == nil { try await Task.sleep(for: .milliseconds(200)) }
        }
        let assigned = try XCTUnwrap(firstAssignment, "no worker got partitions within 60 s")
        // The registration is applied before the notification addressed to its user is published
        // (the devices topic and the intake are consumed side by side, in no order between them).
        let registered = try await fleet.waitFor("SELECT count(*) AS n FROM devices WHERE token = $1 AND user_id = $2",
                                                 [.text(userToken), .text(BrokerFleet.user)], count: 1, timeout: .seconds(60))
        XCTAssertEqual(registered, 1, "the device event was applied")

        // Wave 1: publish and deliver, and the user-addressed notification (device event applied).
        let wave1 = BrokerFleet.notifications(Self.wave, wave: 1)
        let userID = UUID()
        let toUser = #"""
            {"schema_version": 1, "id": "\#(userID.uuidString.lowercased())", "app": "\#(BrokerFleet.app)", \#
            "created_at": "\#(ISO8601DateFormatter().string(from: Date()))", "recipients": [{"user_id": "\#(BrokerFleet.user)"}], \#
            "alert": {"title": "to a user", "body": "via the device registry"}}
            """#
        try await fleet.publish(wave1.lines + [toUser])
        let final1 = try await fleet.waitFinal(wave1.ids + [userID], timeout: .seconds(120))
        XCTAssertEqual(final1, Self.wave + 1, "wave 1 delivered")

        // Receipts for the first ten of wave 1 (delivered) and the next five (opened).
        let at = ISO8601DateFormatter().string(from: Date())
        let receipts = (0..<15).map { n in
            #"{"schema_version": 1, "notification_id": "\#(wave1.ids[n].uuidString.lowercased())", "token": "\#(BrokerFleet.token(wave: 1, n: n))", "app": "\#(BrokerFleet.app)", "platform": "ios", "kind": "\#(n < 10 ? "delivered" : "opened")", "at": "\#(at)"}"#
        }
        try await fleet.publish(receipts, topic: "\(broker.prefix).receipts")

        // Wave 2, and worker 1 killed while the simulator holds its answers.
        let wave2 = BrokerFleet.notifications(Self.wave, wave: 2)
        try await fleet.publish(wave2.lines)
        try await Task.sleep(for: .milliseconds(Self.apnsDelayMilliseconds / 2 + 200))
        let killedAt = Date()
        kill(fleet.workers[0].process.pid, SIGKILL)
        let final2 = try await fleet.waitFinal(wave2.ids, timeout: .seconds(120))
        XCTAssertEqual(final2, Self.wave, "wave 2 delivered after the kill")
        // Its partitions have an owner again once the group noticed (session timeout) and rebalanced.
        let afterKill = try await settle(fleet, dead: ["worker-1"], including: ["worker-2", "worker-3"], after: killedAt)

        // Wave 3, and worker 2 stopped with SIGTERM: it drains, leaves the group and exits 0.
        let wave3 = BrokerFleet.notifications(Self.wave, wave: 3)
        try await fleet.publish(wave3.lines)
        try await Task.sleep(for: .milliseconds(300))
        let stoppedAt = Date()
        let sigtermCode = await fleet.workers[1].process.stop()
        XCTAssertEqual(sigtermCode, 0, "SIGTERM:\n\(fleet.workers[1].process.log.suffix(3000))")
        let final3 = try await fleet.waitFinal(wave3.ids, timeout: .seconds(120))
        XCTAssertEqual(final3, Self.wave, "wave 3 delivered after the SIGTERM")
        let afterStop = try await settle(fleet, dead: ["worker-1", "worker-2"], including: ["worker-3"], after: stoppedAt)

        // Scale-out 1 → 3 with wave 4 published as the new workers join.
        let scaleOut = Date()
        try fleet.startWorker()
        try fleet.startWorker()
        let wave4 = BrokerFleet.notifications(Self.wave, wave: 4)
        try await fleet.publish(wave4.lines)
        let final4 = try await fleet.waitFinal(wave4.ids, timeout: .seconds(120))
        XCTAssertEqual(final4, Self.wave, "wave 4 delivered during the scale-out")
        let settled = try await settle(fleet, dead: ["worker-1", "worker-2"], including: ["worker-3", "worker-4", "worker-5"], after: scaleOut)

        // Receipts and device events landed; nothing lost.
        let c = try await PostgresConnection.connect(url: fleet.database.url, logger: BrokerFleet.logger)
        defer { c.close() }
        let all = wave1.ids + wave2.ids + wave3.ids + wave4.ids + [userID]
        let r = try await c.query(
            """
            SELECT (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[])) AS rows,
                   (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND status NOT IN ('pending', 'retrying')) AS final,
                   (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[])
                      AND status IN ('accepted', 'delivered', 'opened')) AS accepted,
                   (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND delivered_at IS NOT NULL) AS delivered,
                   (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND opened_at IS NOT NULL) AS opened,
                   (SELECT count(*) FROM deliveries WHERE notification_id = $2 AND token = $3 AND status = 'accepted') AS to_user,
                   (SELECT count(*) FROM devices WHERE token = $3 AND user_id = $4 AND invalidated_at IS NULL) AS device
            """, [.uuidArray(all), .uuid(userID), .text(userToken), .text(BrokerFleet.user)]).rows[0]
        let expected = 4 * Self.wave + 1
        let lost = expected - (r.count("final") ?? 0)
        XCTAssertEqual(r.count("rows"), expected, "one ledger row per delivery")
        XCTAssertEqual(lost, 0, "deliveries lost")
        XCTAssertEqual(r.count("accepted"), expected, "every delivery accepted (15 of them then delivered or opened)")
        XCTAssertEqual(r.count("delivered"), 15, "receipts: 10 delivered + 5 opened (opened implies delivered)")
        XCTAssertEqual(r.count("opened"), 5)
        XCTAssertEqual(r.count("device"), 1, "the device event registered the token")
        XCTAssertEqual(r.count("to_user"), 1, "the user-addressed notification reached the registered device")

        // The versions a running worker loaded, as its metrics export them.
        let listen = fleet.workers[2].process.log.split(separator: "\n").first { $0.contains("metrics and health listening") }
            .flatMap { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["metadata"] as? [String: String] }?[
                "observability.listen"]
        let scrape = try await TestEnvironment.run("/usr/bin/env", ["curl", "-s", "http://\(try XCTUnwrap(listen))/metrics"], timeout: .seconds(30))
        let buildInfo = scrape.output.split(separator: "\n").first { $0.hasPrefix("pushfleet_build_info{") }.map(String.init) ?? ""
        XCTAssertTrue(buildInfo.contains(#"librdkafka="\#(library)""#) && buildInfo.hasSuffix(" 1.0"), "pushfleet_build_info: \(buildInfo)")

        let events = fleet.rebalances()
        let drain = fleet.longestRevokeDrain()
        let exitCodes = await fleet.stopWorkers()
        let resent = try await fleet.stopSimulator()
        XCTAssertLessThanOrEqual(resent, Self.inFlightBound, "re-sends beyond the killed worker's in-flight bound")
        XCTAssertEqual(exitCodes[0], 137, "worker 1 was killed")
        XCTAssertEqual(Array(exitCodes.dropFirst()), [0, 0, 0, 0], "every other worker exits 0 on SIGTERM")

        let ownerlessAfterKill = RebalanceTimeline.longestOwnerless(events, from: killedAt, until: afterKill,
                                                                    killed: (fleet.workers[0].name, killedAt))
        let ownerlessAfterStop = RebalanceTimeline.longestOwnerless(events, from: stoppedAt, until: afterStop)
        let ownerlessAtScaleOut = RebalanceTimeline.longestOwnerless(events, from: scaleOut, until: settled)
        let line = String(format: "broker drill: %@ | librdkafka %@ | lost %d | re-sent %d | first assignment %.1f s | ownerless after kill -9 %.1f s, after SIGTERM %.1f s, at scale-out %.1f s (settled after %.1f s; longest revoke drain %.2f s) | exit codes %@ | topics create exit %d | %.0f s",
                          broker.kind.rawValue, library, lost, resent, assigned, ownerlessAfterKill, ownerlessAfterStop, ownerlessAtScaleOut,
                          settled.timeIntervalSince(scaleOut), drain, exitCodes.map(String.init).joined(separator: ","), topics.status,
                          (ContinuousClock.now - began).seconds)
        print(line)
        if ProcessInfo.processInfo.environment["BROKER_DRILL_TIMELINE"] == "1" {
            for event in events where event.time >= killedAt.addingTimeInterval(-1) {
                print(String(format: "broker drill: %@ %+7.2f s %@ %@ %@", broker.kind.rawValue, event.time.timeIntervalSince(scaleOut),
                             event.worker, event.kind.rawValue, event.partitions.joined(separator: ",")))
            }
        }
        print("broker drill: \(broker.kind.rawValue) topics create: \(topics.output.split(separator: "\n").last ?? "")")
    }

    /// Waits until every partition the workers consume (intake, retry tiers, devices)
    /// has a live owner and each of `including` owns one; returns when that happened
    /// (the time of the rebalance that did it).
    private func settle(_ fleet: BrokerFleet, dead: Set<String>, including: Set<String>, after: Date) async throws -> Date {
        let total = BrokerUnderTest.partitions * (2 + BrokerUnderTest.retryTiers.count)
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            if let at = RebalanceTimeline.settled(fleet.rebalances(), total: total, dead: dead, including: including, after: after) {
                return at
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let owners = RebalanceTimeline.owners(fleet.rebalances(), dead: dead)
        throw TestFailure("the group did not settle within 90 s: \(owners.count) of \(total) partitions owned, by \(Set(owners.values))")
    }
}
