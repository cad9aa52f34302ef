import Foundation
import PushTestSupport
import PushPostgres
import XCTest

/// The operator commands on both brokers: `topics create` twice (the second
/// finds every topic), `dlq replay` over ten dead letters produced in one
/// record batch (Tansu reports that partition's end as the batch's base
/// offset + 1: a reader that stopped there read one of ten), `skip` of the
/// sixth of them (past that reported end), and a worker that processes what
/// was replayed.
final class BrokerOperatorTests: XCTestCase {
    func testOperatorCommandsOnTheMockCluster() async throws {
        try await operate(.mock)
    }

    func testOperatorCommandsOnTansu() async throws {
        try await operate(.tansu)
    }

    private func operate(_ kind: BrokerUnderTest.Kind) async throws {
        try await BrokerFleet.run(on: kind, prefix: "ops") { try await run($0) }
    }

    private func run(_ fleet: BrokerFleet) async throws {
        let broker = fleet.broker, binary = fleet.binary, prefix = broker.prefix
        try await fleet.start(apnsDelayMilliseconds: 0)
        let first = try XCTUnwrap(broker.topicsCreate)
        XCTAssertEqual(first.status, 0, first.output)
        let again = try await broker.run(binary, [
            "topics", "create", "--bootstrap-servers", broker.bootstrap, "--topic-prefix", prefix,
            "--partitions", "\(BrokerUnderTest.partitions)", "--dlq-partitions", "\(BrokerUnderTest.deadLetterPartitions)",
            "--replication-factor", "1",
        ], timeout: .seconds(60))
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertTrue(again.output.contains("all \(broker.topics.count) topics exist"), again.output)

        // Ten dead letters in one batch: notifications that expired long ago, one recipient, so one partition.
        let created = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-3600))
        let ids = (0..<10).map { _ in UUID() }
        let token = String(repeating: "cd", count: 32)
        let lines = ids.enumerated().map { n, id in
            #"{"schema_version": 1, "id": "\#(id.uuidString.lowercased())", "app": "\#(BrokerFleet.app)", "created_at": "\#(created)", "ttl_seconds": 60, "recipients": [{"token": "\#(token)", "platform": "ios"}], "alert": {"title": "dead", "body": "letter \#(n)"}}"#
        }
        try await fleet.publish(lines, topic: "\(prefix).dlq")

        let replay = ["dlq", "replay", "--bootstrap-servers", broker.bootstrap, "--database-url", fleet.database.url, "--topic-prefix", prefix]
        let dry = try await broker.run(binary, replay + ["--dry-run"], timeout: .seconds(60))
        XCTAssertEqual(dry.status, 0, dry.output)
        XCTAssertTrue(dry.output.contains("would replay 10, skipped 0 (filters), already replayed 0"), dry.output)
        // The partition holding them: `read <prefix>.dlq[k]: read 0…9 (10 messages) to the end at 10; ...`.
        let readLine = try XCTUnwrap(dry.output.split(separator: "\n").first { $0.contains("(10 messages) to the end at 10") },
                                     "every dead letter read to the partition's end:\n\(dry.output)")
        let partition = try XCTUnwrap(readLine.split(separator: "[").dropFirst().first?.split(separator: "]").first.flatMap { Int32($0) })
        print("broker operator: \(broker.kind.rawValue) dlq replay --dry-run: \(readLine)")

        // Skip the sixth (offset 5: past the end Tansu reports) for a group with no members.
        let skip = ["skip", "--bootstrap-servers", broker.bootstrap, "--topic-prefix", prefix, "--topic", "\(prefix).dlq",
                    "--partition", "\(partition)", "--offset", "5", "--group", "\(prefix)-skip", "--reason", "drill"]
        let skipped = try await broker.run(binary, skip, timeout: .seconds(90))
        XCTAssertEqual(skipped.status, 0, skipped.output)
        XCTAssertTrue(skipped.output.contains("read \(prefix).dlq[\(partition)]@5"), skipped.output)
        XCTAssertTrue(skipped.output.contains("committed \(prefix).dlq[\(partition)] at 6"), skipped.output)
        let skippedAgain = try await broker.run(binary, skip, timeout: .seconds(90))
        XCTAssertEqual(skippedAgain.status, 0, skippedAgain.output)
        XCTAssertTrue(skippedAgain.output.contains("nothing to do"), skippedAgain.output)

        // The real replay: the ten and the skipped copy go to intake; a worker records them expired.
        let replayed = try await broker.run(binary, replay, timeout: .seconds(60))
        XCTAssertEqual(replayed.status, 0, replayed.output)
        XCTAssertTrue(replayed.output.contains("replayed 11, skipped 0 (filters), already replayed 0"), replayed.output)
        let worker = try fleet.startWorker()
        let final = try await fleet.waitFinal(ids, timeout: .seconds(120))
        XCTAssertEqual(final, 10, "the replayed dead letters went through intake to a final outcome")
        let c = try await PostgresConnection.connect(url: fleet.database.url, logger: BrokerFleet.logger)
        defer { c.close() }
        let expired = try await c.query("SELECT count(*) AS n FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND status = 'expired'",
                                        [.uuidArray(ids)]).rows[0]
        XCTAssertEqual(expired.count("n"), 10)
        // Status reads the lanes' lag and the ledger while the worker runs: once the worker has committed
        // past the replayed dead letters, the interactive intake has no lag and nothing is unfinished.
        var statusJSON = "", intakeLag: Int?, unfinished: Int?, laneNames: [String] = []
        for _ in 0..<20 {
            let fleetStatus = try await broker.run(binary, ["status", "--config", fleet.directory + "/worker.json", "--json"],
                                                   timeout: .seconds(60))
            XCTAssertEqual(fleetStatus.status, 0, fleetStatus.output)
            statusJSON = fleetStatus.output.split(separator: "\n").last { $0.hasPrefix("{\"lanes\"") }.map(String.init) ?? fleetStatus.output
            let reported = (try? JSONSerialization.jsonObject(with: Data(statusJSON.utf8))) as? [String: Any]
            let lanes = reported?["lanes"] as? [[String: Any]] ?? []
            laneNames = lanes.compactMap { $0["lane"] as? String }.sorted()
            let interactive = lanes.first { $0["lane"] as? String == "interactive" }?["topics"] as? [[String: Any]] ?? []
            let intake = interactive.first { $0["kind"] as? String == "intake" && $0["topic"] as? String == "\(prefix).notifications" }
            intakeLag = intake?["lag"] as? Int
            unfinished = (reported?["unfinished"] as? [String: Int])?.values.reduce(0, +)
            if intakeLag == 0 { break }
            try await Task.sleep(for: .seconds(1))
        }
        XCTAssertEqual(laneNames, ["bulk", "interactive"], statusJSON)
        XCTAssertEqual(intakeLag, 0, "the worker read and committed the replayed dead letters: \(statusJSON)")
        XCTAssertEqual(unfinished, 0, statusJSON)
        // Circuits come from the workers' own /metrics: this worker's are all closed.
        let listen = worker.process.log.split(separator: "\n").first { $0.contains("metrics and health listening") }
            .flatMap { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["metadata"] as? [String: String] }?[
                "observability.listen"]
        let circuits = try await broker.run(binary, ["status", "--config", fleet.directory + "/worker.json",
                                                     "--metrics", "http://\(try XCTUnwrap(listen, worker.process.log))/metrics"],
                                            timeout: .seconds(60))
        XCTAssertEqual(circuits.status, 0, circuits.output)
        XCTAssertTrue(circuits.output.contains("circuits: all closed in the 1 worker(s) read"), circuits.output)
        let status = await worker.process.stop()
        XCTAssertEqual(status, 0, "the worker exits 0 on SIGTERM:\n\(worker.process.log.suffix(3000))")

        let after = try await broker.run(binary, replay + ["--dry-run"], timeout: .seconds(60))
        XCTAssertEqual(after.status, 0, after.output)
        XCTAssertTrue(after.output.contains("would replay 0, skipped 0 (filters), already replayed 11"), after.output)

        // A worker stopped before its first assignment exits 0; only a librdkafka before
        // 2.2.0 (which aborts then) keeps its consumers' handles alive instead of closing.
        let library = try await broker.librdkafkaVersion(binary: binary)
        let guarded = library.hasPrefix("2.0.") || library.hasPrefix("2.1.")
        let early = try fleet.startWorker()
        try await Task.sleep(for: .milliseconds(800))
        let earlyStatus = await early.process.stop()
        XCTAssertEqual(earlyStatus, 0, "SIGTERM before the first assignment:\n\(early.process.log.suffix(3000))")
        let closing = early.process.log.split(separator: "\n").filter { $0.contains("Kafka consumer closing") }
        XCTAssertEqual(closing.count, 3, "the two lanes' consumers and the receipts consumer close:\n\(early.process.log.suffix(3000))")
        for line in closing {
            XCTAssertTrue(line.contains(#""kafka.early_close_guard":"\#(guarded)""#), "librdkafka \(library): \(line)")
        }
        print("broker operator: \(broker.kind.rawValue) librdkafka \(library): SIGTERM before the first assignment exit \(earlyStatus), "
              + "close guard \(guarded ? "on" : "off")")
    }
}
