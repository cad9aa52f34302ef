import Foundation
import Logging
import PushCore
import PushPostgres
import PushTestSupport
import XCTest

/// `pushfleet dlq replay` end to end: two notifications sit in push.dlq; the
/// replay chooses one by notification id and re-publishes it to intake; a
/// real worker process consumes it and records its outcome (it expired long
/// ago, so the outcome is final without any provider); the other stays out.
final class ReplayTests: XCTestCase {
    func testChosenDeadLettersAreRepublishedToIntakeAndProcessed() async throws {
        var logger = Logger(label: "e2e.replay")
        logger.logLevel = .warning
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        let dir = NSTemporaryDirectory() + "e2e-replay-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let kafka = try BackgroundProcess(binary, ["mock-kafka", "--bootstrap-file", dir + "/bootstrap", "--log-level", "warning"])
        var worker: BackgroundProcess?
        do {
            try await replay(binary: binary, database: database, dir: dir, logger: logger) { worker = $0 }
        } catch {
            if let worker { print("worker output:\n\(worker.output.suffix(4000))") }
            await worker?.stop(grace: .seconds(5))
            await kafka.stop(grace: .seconds(5))
            await database.drop(logger: logger)
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
        if let worker {
            let output = worker.output
            let status = await worker.stop()
            XCTAssertEqual(status, 0, "the worker exits 0 on SIGTERM:\n\(output.suffix(3000))")
        }
        await kafka.stop(grace: .seconds(5))
        await database.drop(logger: logger)
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func replay(binary: String, database: TestDatabase, dir: String, logger: Logger,
                        started: (BackgroundProcess) -> Void) async throws {
        // The local cluster's address.
        var bootstrap = ""
        let deadline = ContinuousClock.now + .seconds(30)
        while bootstrap.isEmpty, ContinuousClock.now < deadline {
            bootstrap = (try? String(contentsOfFile: dir + "/bootstrap", encoding: .utf8)) ?? ""
            if bootstrap.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard !bootstrap.isEmpty else { throw TestFailure("mock-kafka did not start") }
        let migrate = try await TestEnvironment.run(binary, ["migrate", "--database-url", database.url], timeout: .seconds(120))
        XCTAssertEqual(migrate.status, 0, migrate.output)

        // Two notifications that expired long ago, put straight onto the dead-letter topic.
        let chosen = UUID(), other = UUID()
        let created = Timestamps.format(Date().addingTimeInterval(-3600))
        for (id, name) in [(chosen, "chosen"), (other, "other")] {
            let json = """
                {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "com.example.replay",
                 "created_at": "\(created)", "ttl_seconds": 60,
                 "recipients": [{"token": "\(String(repeating: "ab", count: 32))", "platform": "ios"}],
                 "alert": {"title": "Replay", "body": "me"}}
                """
            try Data(json.utf8).write(to: URL(fileURLWithPath: "\(dir)/\(name).json"))
        }
        let seeded = try await TestEnvironment.run(binary, [
            "enqueue", "--bootstrap-servers", bootstrap, "--topic", "push.dlq", "\(dir)/chosen.json", "\(dir)/other.json",
        ], timeout: .seconds(60))
        XCTAssertEqual(seeded.status, 0, seeded.output)

        let replayed = try await TestEnvironment.run(binary, [
            "dlq", "replay", "--bootstrap-servers", bootstrap, "--database-url", database.url,
            "--notification-id", chosen.uuidString.lowercased(),
        ], timeout: .seconds(30))
        XCTAssertEqual(replayed.status, 0, replayed.output)
        XCTAssertTrue(replayed.output.contains("replayed 1, skipped 1"), replayed.output)
        // A second run finds the chosen one already replayed and the other still there.
        let again = try await TestEnvironment.run(binary, [
            "dlq", "replay", "--bootstrap-servers", bootstrap, "--database-url", database.url, "--dry-run",
        ], timeout: .seconds(30))
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertTrue(again.output.contains("would replay 1, skipped 0 (filters), already replayed 1"), again.output)

        // `dlq list` says what is dead-lettered and which were replayed, and changes nothing.
        let listed = try await TestEnvironment.run(binary, [
            "dlq", "list", "--bootstrap-servers", bootstrap, "--database-url", database.url,
        ], timeout: .seconds(30))
        XCTAssertEqual(listed.status, 0, listed.output)
        let lines = listed.output.split(separator: "\n").map(String.init)
        let chosenLine = lines.first { $0.contains(chosen.uuidString.lowercased()) } ?? ""
        let otherLine = lines.first { $0.contains(other.uuidString.lowercased()) } ?? ""
        XCTAssertTrue(chosenLine.hasPrefix("push.dlq/0/") && chosenLine.contains(" replayed "), listed.output)
        XCTAssertTrue(otherLine.hasPrefix("push.dlq/0/") && otherLine.contains(" not replayed "), listed.output)
        XCTAssertTrue(listed.output.contains("2 dead letter(s) listed: 1 replayed, 1 not replayed"), listed.output)
        let pending = try await TestEnvironment.run(binary, [
            "dlq", "list", "--bootstrap-servers", bootstrap, "--database-url", database.url, "--not-replayed",
        ], timeout: .seconds(30))
        XCTAssertEqual(pending.status, 0, pending.output)
        XCTAssertFalse(pending.output.contains(chosen.uuidString.lowercased()), pending.output)
        XCTAssertTrue(pending.output.contains(other.uuidString.lowercased()), pending.output)

        // A worker (its APNs key is never used: expired notifications are not sent).
        let keyPath = dir + "/AuthKey.p8"
        let key = try await TestEnvironment.run("/bin/sh", ["-c",
            "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '\(keyPath)'"],
            timeout: .seconds(30))
        XCTAssertEqual(key.status, 0, key.output)
        let config = """
            {"kafka": {"bootstrap_servers": "\(bootstrap)", "group_id": "replay-e2e",
                       "properties": {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}},
             "database": {"url": "\(database.url)", "pool_size": 2},
             "observability": {"listen": "127.0.0.1:0"},
             "apps": {"com.example.replay": {"apns": {"topic": "com.example.replay", "team_id": "TEAM000001",
                                                      "key_id": "KEY0000001", "key_path": "\(keyPath)",
                                                      "base_url": "https://127.0.0.1:9"}}}}
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: dir + "/worker.json"))
        let worker = try BackgroundProcess(binary, ["worker", "--config", dir + "/worker.json"],
                                           environment: ["PUSHFLEET_EXIT_WITH_PARENT": "1", "PUSHFLEET_LOG_LEVEL": "warning"])
        started(worker)

        let c = try await PostgresConnection.connect(url: database.url, logger: logger)
        defer { c.close() }
        var status: String?
        let until = ContinuousClock.now + .seconds(120)
        while status == nil, ContinuousClock.now < until {
            status = try await c.query("SELECT status FROM deliveries WHERE notification_id = $1", [.uuid(chosen)]).rows.first?["status"]
            if status == nil { try await Task.sleep(for: .milliseconds(250)) }
        }
        XCTAssertEqual(status, "expired", "the replayed notification went through intake to a final outcome")
        let others = try await c.query("SELECT count(*) AS n FROM deliveries WHERE notification_id = $1", [.uuid(other)]).rows[0]
        XCTAssertEqual(others.count("n"), 0, "the message not chosen is not replayed")
    }
}
