import Foundation
import PushTestSupport
import XCTest

/// Issue 17's "small things a first-time operator trips over", checked on the
/// real binary: lines scripts wait for reach a pipe at once, and a missing
/// migrations directory gets a hint the command can follow.
final class OperatorCommandTests: XCTestCase {
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

    func testAMissingMigrationsDirectoryGetsAHintTheCommandCanFollow() async throws {
        let binary = try TestEnvironment.pushfleetBinary()
        // A copy of the binary outside the repository, run from an empty directory:
        // none of the places it looks for schemas/postgres exists.
        let dir = NSTemporaryDirectory() + "e2e-nomigrations-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: binary, toPath: dir + "/pushfleet")
        func run(_ arguments: String) async throws -> TestEnvironment.Run {
            try await TestEnvironment.run("/bin/sh", ["-c",
                "cd '\(dir)' && exec env -u PUSHFLEET_MIGRATIONS_DIR ./pushfleet \(arguments)"], timeout: .seconds(120))
        }
        let migrate = try await run("migrate --database-url postgresql://127.0.0.1:1/none")
        XCTAssertNotEqual(migrate.status, 0)
        XCTAssertTrue(migrate.output.contains("pass --migrations DIR or set PUSHFLEET_MIGRATIONS_DIR"), migrate.output)
        let demo = try await run("demo --database-url postgresql://127.0.0.1:1/none --notifications 1 --workers 1 --timeout 10")
        XCTAssertNotEqual(demo.status, 0)
        XCTAssertTrue(demo.output.contains("cannot find the SQL migrations; set PUSHFLEET_MIGRATIONS_DIR"), demo.output)
        XCTAssertFalse(demo.output.contains("--migrations"), "demo has no --migrations option:\n\(demo.output)")
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
        let cases: [(app: String, key: String)] = [
            (#"{"apns": {"topic": "com.example.a", "team_id": "ABCDE12345", "key_id": "XYZ987WVU6", "key_path": "\#(garbage)"}}"#,
             "apps.com.example.a.apns.key_path"),
            (#"{"apns": {"topic": "com.example.a", "team_id": "ABCDE12345", "key_id": "XYZ987WVU6", "key_path": "\#(missing)"}}"#,
             "apps.com.example.a.apns.key_path"),
            (#"{"fcm": {"service_account_path": "\#(garbage)"}}"#, "apps.com.example.a.fcm.service_account_path"),
            (#"{"webpush": {"vapid_private_key_path": "\#(garbage)", "subject": "mailto:ops@example.com"}}"#,
             "apps.com.example.a.webpush"),
            (#"{"hms": {"app_id": "101234567", "client_secret_path": "\#(missing)"}}"#, "apps.com.example.a.hms.client_secret_path"),
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
}
