import Foundation
import Logging
import PushPostgres
import PushTestSupport
import XCTest

/// Small things a first-time operator trips over, checked on the real
/// binary: lines scripts wait for reach a pipe at once, a copied binary works
/// from any directory, and a bad key stops a worker as a bad configuration.
final class OperatorCommandTests: XCTestCase {
    static let logger: Logger = {
        var logger = Logger(label: "e2e.operator")
        logger.logLevel = .warning
        return logger
    }()

    func testListeningLinesReachAPipeWhileTheProcessRuns() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        let simulator = try BackgroundProcess(binary, ["simulate", "--port", "0", "--log-level", "error"])
        let kafka = try BackgroundProcess(binary, ["mock-kafka", "--brokers", "1", "--log-level", "error"])
        var simulatorLine = "", kafkaLine = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while (simulatorLine.isEmpty || kafkaLine.isEmpty), ContinuousClock.now < deadline {
            simulatorLine = simulator.output.split(separator: "\n").first { $0.hasPrefix("simulator listening on https://") }.map(String.init) ?? ""
            kafkaLine = kafka.output.split(separator: "\n").first { $0.hasPrefix("127.0.0.1:") }.map(String.init) ?? ""
            try await Task.sleep(for: .milliseconds(200))
        }
        let simulatorOutput = simulator.output, kafkaOutput = kafka.output
        let simulatorStatus = await simulator.stop(grace: .seconds(10))
        let kafkaStatus = await kafka.stop(grace: .seconds(10))
        XCTAssertEqual(simulatorStatus, 0)
        XCTAssertEqual(kafkaStatus, 0)
        XCTAssertFalse(simulatorLine.isEmpty, "`simulate` must print its listening line while it runs, not at exit:\n\(simulatorOutput)")
        XCTAssertFalse(kafkaLine.isEmpty, "`mock-kafka` must print its bootstrap servers while it runs:\n\(kafkaOutput)")
    }

    /// The help a newcomer reads first names every provider the fleet sends to.
    func testHelpNamesEveryProvider() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        for arguments in [["--help"], ["simulate", "--help"]] {
            let help = try await TestEnvironment.run(binary, arguments, timeout: .seconds(30))
            XCTAssertEqual(help.status, 0, help.output)
            let flat = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for provider in ["APNs", "FCM", "Web Push", "Push Kit"] {
                XCTAssertTrue(flat.contains(provider), "`pushfleet \(arguments.joined(separator: " "))` does not name \(provider):\n\(help.output)")
            }
        }
    }

    /// The binary carries its SQL migrations: a copy of it, run from an empty
    /// directory with no PUSHFLEET_MIGRATIONS_DIR, migrates a fresh database
    /// with exactly the files of schemas/postgres/ (their checksums too: the
    /// directory then finds nothing to do) and runs the demo; `--migrations
    /// DIR` and PUSHFLEET_MIGRATIONS_DIR still apply another set instead.
    func testACopiedBinaryMigratesAndRunsTheDemoFromAnEmptyDirectory() async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let dir = NSTemporaryDirectory() + "e2e-anywhere-\(UUID().uuidString)"
        let extra = NSTemporaryDirectory() + "e2e-extra-migrations-\(UUID().uuidString)"
        for path in [dir + "/empty", extra] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        defer { for path in [dir, extra] { try? FileManager.default.removeItem(atPath: path) } }
        try FileManager.default.copyItem(atPath: binary, toPath: dir + "/pushfleet")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../schemas/postgres").standardized.path
        let sqlFiles = try FileManager.default.contentsOfDirectory(atPath: repository).filter { $0.hasSuffix(".sql") }.sorted()
        XCTAssertGreaterThanOrEqual(sqlFiles.count, 15)
        func run(_ arguments: String, env: String = "", timeout: Int = 120) async throws -> TestEnvironment.Run {
            try await TestEnvironment.run("/bin/sh", ["-c",
                "cd '\(dir)/empty' && exec env -u PUSHFLEET_MIGRATIONS_DIR \(env) ../pushfleet \(arguments)"], timeout: .seconds(timeout))
        }

        let database = try await TestDatabase.create(adminURL: adminURL, logger: Self.logger)
        let other = try await TestDatabase.create(adminURL: adminURL, logger: Self.logger)
        do {
            let first = try await run("migrate --database-url '\(database.url)' --log-level error")
            XCTAssertEqual(first.status, 0, first.output)
            XCTAssertTrue(first.output.contains("applied: " + sqlFiles.joined(separator: ", ")), first.output)
            let again = try await run("migrate --database-url '\(database.url)' --log-level error")
            XCTAssertTrue(again.output.contains("schema up to date"), again.output)
            // The repository's files are what the binary applied, byte for byte (a changed checksum would stop this run).
            let fromFiles = try await run("migrate --database-url '\(database.url)' --migrations '\(repository)' --log-level error")
            XCTAssertEqual(fromFiles.status, 0, fromFiles.output)
            XCTAssertTrue(fromFiles.output.contains("schema up to date"), fromFiles.output)

            // --migrations and PUSHFLEET_MIGRATIONS_DIR name another set, applied instead of the built-in one.
            try Data("CREATE TABLE only_from_the_option (id int);".utf8).write(to: URL(fileURLWithPath: extra + "/0001_option.sql"))
            let option = try await run("migrate --database-url '\(other.url)' --migrations '\(extra)' --log-level error")
            XCTAssertEqual(option.status, 0, option.output)
            XCTAssertTrue(option.output.contains("applied: 0001_option.sql"), option.output)
            try Data("CREATE TABLE only_from_the_environment (id int);".utf8).write(to: URL(fileURLWithPath: extra + "/0002_env.sql"))
            let environment = try await run("migrate --database-url '\(other.url)' --log-level error", env: "PUSHFLEET_MIGRATIONS_DIR='\(extra)'")
            XCTAssertTrue(environment.output.contains("applied: 0002_env.sql"), environment.output)
            let c = try await PostgresConnection.connect(url: other.url, logger: Self.logger)
            let tables = try await c.query("SELECT to_regclass('devices') IS NULL AS no_devices").rows.first?["no_devices"]
            c.close()
            XCTAssertEqual(tables, "t", "only the named set was applied")
            let missing = try await run("migrate --database-url '\(other.url)' --migrations '\(dir)/none' --log-level error")
            XCTAssertNotEqual(missing.status, 0)
            XCTAssertTrue(missing.output.contains("cannot list migrations directory \(dir)/none"), missing.output)

            // The demo applies the built-in migrations to a database of its own and runs to the end.
            let demoDatabase = try await TestDatabase.create(adminURL: adminURL, logger: Self.logger)
            let timeout = TestEnvironment.demoTimeout(deliveries: 24)
            let demo = try await run("demo --database-url '\(demoDatabase.url)' --notifications 20 --workers 1 --timeout \(timeout) --log-level warning",
                                     timeout: timeout + 120)
            let applied = try? await { () async throws -> [String] in
                let c = try await PostgresConnection.connect(url: demoDatabase.url, logger: Self.logger)
                defer { c.close() }
                return try await c.query("SELECT name FROM schema_migrations ORDER BY version").rows.compactMap { $0["name"] }
            }()
            await demoDatabase.drop(logger: Self.logger)
            XCTAssertEqual(demo.status, 0, String(demo.output.suffix(4000)))
            XCTAssertEqual(applied, sqlFiles)
        } catch {
            await database.drop(logger: Self.logger)
            await other.drop(logger: Self.logger)
            throw error
        }
        await database.drop(logger: Self.logger)
        await other.drop(logger: Self.logger)
    }

    /// A key file that is missing or not a key is a bad configuration like any
    /// other: the worker stops at start with exit 78 (which the systemd units
    /// do not restart) and a message naming the key, whichever provider.
    func testAnUnusableKeyFileStopsTheWorkerWithExit78NamingTheKey() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        let dir = NSTemporaryDirectory() + "e2e-badkeys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage = dir + "/garbage.pem"
        try Data("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let missing = dir + "/missing"
        // Push Kit app secrets that can be no secret: not UTF-8, and two lines.
        let latin1 = dir + "/latin1.secret", twoLines = dir + "/two-lines.secret"
        try Data([0x73, 0x33, 0x63, 0x72, 0xE9, 0x74, 0x0A]).write(to: URL(fileURLWithPath: latin1))
        try Data("first-secret\nsecond-secret\n".utf8).write(to: URL(fileURLWithPath: twoLines))
        let cases: [(app: String, key: String)] = [
            (#"{"apns": {"topic": "com.example.a", "team_id": "ABCDE12345", "key_id": "XYZ987WVU6", "key_path": "\#(garbage)"}}"#,
             "apps.com.example.a.apns.key_path"),
            (#"{"apns": {"topic": "com.example.a", "team_id": "ABCDE12345", "key_id": "XYZ987WVU6", "key_path": "\#(missing)"}}"#,
             "apps.com.example.a.apns.key_path"),
            (#"{"fcm": {"service_account_path": "\#(garbage)"}}"#, "apps.com.example.a.fcm.service_account_path"),
            (#"{"webpush": {"vapid_private_key_path": "\#(garbage)", "subject": "mailto:ops@example.com"}}"#,
             "apps.com.example.a.webpush"),
            (#"{"hms": {"app_id": "101234567", "client_secret_path": "\#(missing)"}}"#, "apps.com.example.a.hms.client_secret_path"),
            (#"{"hms": {"app_id": "101234567", "client_secret_path": "\#(latin1)"}}"#, "apps.com.example.a.hms.client_secret_path"),
            (#"{"hms": {"app_id": "101234567", "client_secret_path": "\#(twoLines)"}}"#, "apps.com.example.a.hms.client_secret_path"),
            (#"{"webpush": {"vapid_private_key_path": "\#(missing)", "subject": "mailto:ops@example.com"}}"#,
             "apps.com.example.a.webpush.vapid_private_key_path"),
        ]
        for (index, item) in cases.enumerated() {
            let config = dir + "/worker-\(index).json"
            try Data("""
                {"kafka": {"bootstrap_servers": "127.0.0.1:1", "group_id": "badkeys", "topic_prefix": "push"},
                 "database": {"url": "postgresql://postgres@127.0.0.1:1/none"},
                 "apps": {"com.example.a": \(item.app)}}
                """.utf8).write(to: URL(fileURLWithPath: config))
            let run = try await TestEnvironment.run(binary, ["worker", "--config", config, "--no-receipts", "--log-level", "error"],
                                                    timeout: .seconds(120))
            XCTAssertEqual(run.status, 78, "case \(index):\n\(run.output)")
            XCTAssertTrue(run.output.contains("invalid configuration"), "case \(index):\n\(run.output)")
            XCTAssertTrue(run.output.contains(item.key), "case \(index) must name \(item.key):\n\(run.output)")
        }
    }

    /// Issue 18: `bench send --floor` runs the C libcurl loop against the same
    /// sink and reports our CPU per request as a ratio to the floor's.
    func testBenchSendWithTheFloorReportsTheRatio() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        let json = NSTemporaryDirectory() + "e2e-floor-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try await TestEnvironment.run(binary, [
            "bench", "send", "--notifications", "600", "--concurrency", "20", "--floor", "--rounds", "2",
            "--json", json, "--log-level", "error",
        ], timeout: .seconds(300))
        XCTAssertEqual(run.status, 0, run.output)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        XCTAssertEqual(object["succeeded"] as? Int, 600)
        XCTAssertEqual(object["floor_failed"] as? Int, 0, "the floor's requests all got 2xx from the sink")
        let floor = try XCTUnwrap(object["floor_us_per_request"] as? Double)
        let ratio = try XCTUnwrap(object["ratio_to_floor"] as? Double)
        XCTAssertGreaterThan(floor, 0)
        XCTAssertGreaterThan(ratio, 0)
        XCTAssertTrue(run.output.contains("our CPU per request / the floor's"), run.output)
    }

    /// Issue 19: `bench send` drives the two new providers' clients at the
    /// simulator: Web Push (encrypted per message, VAPID-signed) and Push Kit.
    func testBenchSendReachesWebPushAndHuaweiPushKit() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        for platform in ["webpush", "hms"] {
            let json = NSTemporaryDirectory() + "e2e-\(platform)-\(UUID().uuidString).json"
            defer { try? FileManager.default.removeItem(atPath: json) }
            let run = try await TestEnvironment.run(binary, [
                "bench", "send", "--platform", platform, "--notifications", "300", "--concurrency", "20",
                "--json", json, "--log-level", "error",
            ], timeout: .seconds(300))
            XCTAssertEqual(run.status, 0, run.output)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
            XCTAssertEqual(object["platform"] as? String, platform)
            XCTAssertEqual(object["succeeded"] as? Int, 300, "\(platform): \(run.output)")
            XCTAssertEqual(object["failed"] as? Int, 0, "\(platform): \(run.output)")
        }
    }

    /// `demo --keep` leaves its stack up after the result: the printed addresses and
    /// worker config reach it (status, dlq list see the run's dead letters), and
    /// SIGTERM ends it with exit 0.
    func testTheDemoKeepsItsStackUpForTheOperatorCommands() async throws {
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: Self.logger)
        let dir = NSTemporaryDirectory() + "e2e-keep-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let demo = try FuzzProcess(name: "demo", binary, [
            "demo", "--database-url", database.url, "--notifications", "20", "--workers", "1", "--keep",
            "--work-dir", dir + "/work", "--timeout", "\(TestEnvironment.demoTimeout(deliveries: 24))", "--log-level", "warning",
        ], logPath: dir + "/demo.log")
        var up = false
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.demoTimeout(deliveries: 24) + 60)
        while ContinuousClock.now < deadline, demo.exited() == nil {
            if demo.log.contains("stays up until Ctrl-C") { up = true; break }
            try await Task.sleep(for: .milliseconds(200))
        }
        do {
            XCTAssertTrue(up, "demo --keep never said the stack stays up:\n\(demo.log.suffix(4000))")
            XCTAssertTrue(demo.log.contains("RESULT: PASS"), String(demo.log.suffix(4000)))
            let bootstrap = try XCTUnwrap(demo.log.split(separator: "\n").first { $0.hasPrefix("  kafka:") }?
                .split(separator: " ").last.map(String.init), String(demo.log.suffix(4000)))
            let config = dir + "/work/worker.json"
            XCTAssertTrue(FileManager.default.fileExists(atPath: config), "the worker config is kept")

            let status = try await TestEnvironment.run(binary, ["status", "--config", config, "--database-url", database.url], timeout: .seconds(60))
            XCTAssertEqual(status.status, 0, status.output)
            XCTAssertTrue(status.output.contains("lane interactive"), status.output)
            XCTAssertTrue(status.output.contains("pending 0, retrying 0, parked 0"), status.output)
            // The demo's invalid messages are on its dead-letter topic, still there to list (and replay).
            let list = try await TestEnvironment.run(binary, ["dlq", "list", "--bootstrap-servers", bootstrap,
                                                              "--database-url", database.url], timeout: .seconds(60))
            XCTAssertEqual(list.status, 0, list.output)
            XCTAssertTrue(list.output.contains("dead letter(s) listed"), list.output)
            XCTAssertFalse(list.output.contains("0 dead letter(s) listed"), list.output)
        } catch {
            _ = await demo.stop()
            await database.drop(logger: Self.logger)
            throw error
        }
        let exit = await demo.stop()
        await database.drop(logger: Self.logger)
        XCTAssertEqual(exit, 0, "SIGTERM ends demo --keep cleanly:\n\(demo.log.suffix(3000))")
    }
}
