import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest

/// The kill switch end to end: `pushfleet campaign cancel` against two real
/// workers sending a 20,000-delivery campaign on the bulk lane, the
/// simulator's request log against the time the command returned, and a
/// worker started after a cancel.
final class CampaignKillSwitchTests: XCTestCase {
    static let deliveries = 20_000
    /// Devices per message: 2,000 messages of 10.
    static let perMessage = 10

    var logger: Logger { TestEnvironment.logger("e2e.campaign") }

    /// The campaign's device tokens: 64 hex digits, distinct per test run.
    static func token(_ run: UInt32, _ i: Int) -> String {
        let hex = String(i, radix: 16)
        return String(format: "%08x", run) + String(repeating: "0", count: 56 - hex.count) + hex
    }

    static func message(id: UUID = UUID(), campaign: String?, tokens: [String]) -> [UInt8] {
        var n = PushNotification(id: id, app: FuzzStack.app, createdAt: Date(),
                                 recipients: tokens.map { Recipient(token: $0, platform: .ios) },
                                 alert: .init(title: "Spring sale", body: "30% off"))
        n.campaign = campaign
        return n.intakeJSON().encoded()
    }

    /// Publishes `tokens` in messages of `perMessage` to `topic` (keyed by the first token).
    func publish(_ tokens: [String], campaign: String?, topic: String, bootstrap: String) async throws {
        let producer = try KafkaProducer(bootstrapServers: bootstrap, properties: ["linger.ms": "5"], logger: logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for start in stride(from: 0, to: tokens.count, by: Self.perMessage) {
                    let chunk = Array(tokens[start..<min(start + Self.perMessage, tokens.count)])
                    group.addTask {
                        try await producer.send(topic: topic, key: Array(chunk[0].utf8), value: Self.message(campaign: campaign, tokens: chunk))
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            await producer.close(timeout: .seconds(5))
            throw error
        }
        await producer.close(timeout: .seconds(10))
    }

    /// Runs `pushfleet campaign …` to its end (blocking: the time it returned is what is measured).
    func campaign(_ arguments: [String], database: TestDatabase, binary: String) throws -> String {
        let run = try TestEnvironment.runToEnd(binary, ["campaign"] + arguments + ["--database-url", database.url, "--log-level", "warning"],
                                               environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHFLEET_") })
        guard run.status == 0 else { throw TestFailure("pushfleet campaign \(arguments) exited \(run.status): \(run.output)") }
        return run.output
    }

    /// Status counts of `campaign`'s rows (nil campaign: rows without one).
    func counts(_ campaign: String?, _ c: PostgresConnection) async throws -> [String: Int] {
        let rows = try await c.query(
            "SELECT status, count(*) AS n FROM deliveries WHERE campaign IS NOT DISTINCT FROM $1 GROUP BY 1",
            [campaign.map(PostgresValue.text) ?? .null])
        var out: [String: Int] = [:]
        for row in rows.rows { out[row["status"] ?? ""] = row.count("n") }
        return out
    }

    /// Polls until `done` holds or `timeout` passes; false on timeout.
    func wait(_ timeout: Duration, _ done: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await done() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// The workers' in-flight bound: a batch's rows reach the ledger when its
    /// part is done, so with the default (20,000) the ledger would show 30 %
    /// final when nearly the whole campaign had been sent.
    static let deliveriesInFlight = 1_000

    func withStack(workers: Int, _ body: (FuzzStack, TestDatabase, String) async throws -> Void) async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: try TestEnvironment.databaseURL(), logger: logger)
        let stack = try FuzzStack(binary: binary, database: database, hostile: Self.deliveries / Self.perMessage)
        do {
            try await stack.start(workerCount: workers, tightFirst: false, simulatorSettings: ["requestLog": 200_000],
                                  workerSettings: ["max_deliveries_in_flight": Self.deliveriesInFlight])
            try await body(stack, database, binary)
        } catch {
            print("campaign test failed; logs in \(stack.directory)")
            await stack.stopAll(keepDirectory: true)
            await database.drop(logger: logger)
            throw error
        }
        await stack.stopAll(keepDirectory: ProcessInfo.processInfo.environment["CAMPAIGN_E2E_KEEP"] != nil)
        await database.drop(logger: logger)
    }

    /// The simulator's logged requests whose target is in `tokens`: their arrival times.
    static func requestTimes(_ stats: JSONValue, to tokens: Set<String>) -> [Double] {
        guard case .array(let requests)? = stats["requests"] else { return [] }
        return requests.compactMap { r in
            guard let target = r["target"]?.stringValue, tokens.contains(target), let at = r["at"]?.numberValue else { return nil }
            return at
        }
    }

    func testACancelledCampaignStopsOnEveryWorkerWithinSeconds() async throws {
        try await withStack(workers: 2) { stack, database, binary in
            let run = UInt32.random(in: 0...UInt32.max)
            let name = "e2e-spring-\(run)"
            let tokens = (0..<Self.deliveries).map { Self.token(run, $0) }
            let topics = TopicNames()
            try await publish(tokens, campaign: name, topic: topics.bulk.intake, bootstrap: stack.bootstrap)
            let db = try await PostgresConnection.connect(url: database.url, logger: logger)
            defer { db.close() }

            // Cancel at about 30 % final.
            var finalAtCancel = 0
            let reached = try await wait(.seconds(240)) {
                finalAtCancel = try await counts(name, db).filter { !["pending", "retrying", "parked"].contains($0.key) }.values.reduce(0, +)
                return finalAtCancel >= Self.deliveries * 3 / 10
            }
            XCTAssertTrue(reached, "the campaign never reached 30 % final: \(finalAtCancel)")
            let issued = Date().timeIntervalSince1970
            let output = try campaign(["cancel", name, "--reason", "wrong text", "--by", "e2e"], database: database, binary: binary)
            let returned = Date().timeIntervalSince1970
            XCTAssertTrue(output.contains("cancelled by e2e"), output)
            // An interactive notification published now is delivered all the same.
            let interactive = Self.token(run ^ 0xFFFF_FFFF, 1)
            try await publish([interactive], campaign: nil, topic: topics.intake, bootstrap: stack.bootstrap)

            // Everything published ends: final + 0 in flight.
            var last: [String: Int] = [:]
            let settled = try await wait(.seconds(240)) {
                last = try await counts(name, db)
                let interactiveDone = try await counts(nil, db)["accepted"] == 1
                return last.values.reduce(0, +) == Self.deliveries && last.keys.allSatisfy { ["accepted", "cancelled"].contains($0) }
                    && interactiveDone
            }
            let untagged = try await counts(nil, db)
            XCTAssertTrue(settled, "not settled: \(last), interactive \(untagged)")
            let cancelledAt = try await db.query("SELECT extract(epoch FROM cancelled_at)::float8 AS t FROM campaign_cancellations").rows
                .first.flatMap { try? $0.double("t") } ?? returned

            // The workers' own time of their last send (taken when the send is asked for, before any
            // wait for a stream slot), and how many rows were final when the command returned.
            let workerLast = try await db.query(
                "SELECT extract(epoch FROM max(last_attempt_at))::float8 AS t FROM deliveries WHERE campaign = $1", [.text(name)]).rows
                .first.flatMap { try? $0.double("t") } ?? 0
            let finalAtReturn = try await db.query(
                "SELECT count(*) AS n FROM deliveries WHERE campaign = $1 AND status <> 'cancelled' AND final_at <= to_timestamp($2::float8)",
                [.text(name), .double(returned)]).rows.first?.count("n") ?? 0
            let stats = try await stack.stopSimulator()
            XCTAssertEqual(stats.int("requestsNotLogged"), 0, "the request log holds every request")
            let sends = Self.requestTimes(stats, to: Set(tokens))
            let lastSend = sends.max() ?? 0
            let accepted = last["accepted"] ?? 0, cancelled = last["cancelled"] ?? 0
            print(String(format: "campaign kill switch: cancel issued at %d/%d final (%.0f %%), returned after %.3f s at %d final; "
                         + "%d accepted, %d cancelled; last send %.3f s after the cancel returned (%.3f s after it was recorded; "
                         + "the workers' clock: %.3f s); %d requests after the return",
                         finalAtCancel, Self.deliveries, Double(finalAtCancel) * 100 / Double(Self.deliveries), returned - issued,
                         finalAtReturn, accepted, cancelled, lastSend - returned, lastSend - cancelledAt, workerLast - returned,
                         sends.filter { $0 > returned }.count))
            XCTAssertLessThanOrEqual(lastSend, returned + 5, "a send of the cancelled campaign started more than 5 s after the cancel returned")
            XCTAssertGreaterThan(cancelled, 0, "the cancel stopped something")
            XCTAssertEqual(sends.count, accepted, "every request of the campaign is an accepted row; every other row is cancelled")
            XCTAssertEqual(Self.requestTimes(stats, to: [interactive]).count, 1, "the interactive notification was sent")

            // The cancelled rows say who, when and why; the funnel counts them.
            let detail = try await db.query(
                "SELECT count(*) FILTER (WHERE detail LIKE $2) AS told, count(*) AS n FROM deliveries WHERE campaign = $1 AND status = 'cancelled'",
                [.text(name), .text("campaign \(name) cancelled by e2e at %: wrong text")]).rows[0]
            XCTAssertEqual(detail.count("told"), detail.count("n"), "every cancelled row names who, when and why")
            let funnel = try await db.query("SELECT sum(cancelled) AS c, sum(accepted) AS a FROM campaign_funnel WHERE campaign = $1",
                                            [.text(name)]).rows[0]
            XCTAssertEqual(funnel.count("c"), cancelled)
            XCTAssertEqual(funnel.count("a"), accepted)
            let status = try JSONValue.parse(Array(try campaign(["status", name, "--json"], database: database, binary: binary).utf8))
            XCTAssertEqual(status.int("ledger_deliveries"), Self.deliveries)
            XCTAssertEqual(status.int("in_flight"), 0)
            XCTAssertEqual(status.int("cancelled_deliveries"), cancelled)
            XCTAssertEqual(status["cancelled"], .bool(true))
        }
    }

    /// A worker started after the cancel reads it before its first batch: a
    /// campaign published while no worker ran is cancelled, never sent; after
    /// `resume` the same campaign is sent again.
    func testAWorkerStartedAfterTheCancelHonoursItAndResumeLiftsIt() async throws {
        try await withStack(workers: 1) { stack, database, binary in
            let run = UInt32.random(in: 0...UInt32.max)
            let name = "e2e-restart-\(run)"
            let topics = TopicNames()
            let db = try await PostgresConnection.connect(url: database.url, logger: logger)
            defer { db.close() }
            // The first worker is up and sending.
            let warm = Self.token(run ^ 0xFFFF_FFFF, 1)
            try await publish([warm], campaign: nil, topic: topics.intake, bootstrap: stack.bootstrap)
            let up = try await wait(.seconds(120)) { try await counts(nil, db)["accepted"] == 1 }
            XCTAssertTrue(up, "the first worker never sent")

            _ = try campaign(["cancel", name, "--by", "e2e"], database: database, binary: binary)
            let stopped = await stack.workers[0].stop()
            XCTAssertEqual(stopped, 0)
            let before = (0..<500).map { Self.token(run, $0) }
            try await publish(before, campaign: name, topic: topics.bulk.intake, bootstrap: stack.bootstrap)
            try stack.startWorker()

            var seen: [String: Int] = [:]
            let cancelledAll = try await wait(.seconds(120)) {
                seen = try await counts(name, db)
                return seen == ["cancelled": before.count]
            }
            XCTAssertTrue(cancelledAll, "the restarted worker sent or missed some: \(seen)")

            _ = try campaign(["resume", name, "--by", "e2e"], database: database, binary: binary)
            let after = (500..<600).map { Self.token(run, $0) }
            // Past the workers' next read of the cancellations.
            try await Task.sleep(for: .seconds(2))
            try await publish(after, campaign: name, topic: topics.bulk.intake, bootstrap: stack.bootstrap)
            let resumed = try await wait(.seconds(120)) {
                seen = try await counts(name, db)
                return seen == ["cancelled": before.count, "accepted": after.count]
            }
            XCTAssertTrue(resumed, "after resume: \(seen)")

            let stats = try await stack.stopSimulator()
            XCTAssertEqual(Self.requestTimes(stats, to: Set(before)).count, 0, "no request for the deliveries published while cancelled")
            XCTAssertEqual(Self.requestTimes(stats, to: Set(after)).count, after.count)
        }
    }
}
