import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 17: `pushfleet dlq replay` printed `replayed 1` while the ledger kept
/// suppressing the dead-lettered delivery, and a filtered run moved a shared
/// group past what it skipped. Retries are exhausted for real against the
/// simulator (503s), the dead letters go to librdkafka's mock cluster, and the
/// replayed messages are processed by the worker's own processor.
final class DeadLetterReplayTests: XCTestCase {
    /// The simulator and a database (`DeliverySemanticsTests.stack`), librdkafka's
    /// mock cluster with the dead-letter and intake topics, a producer, and the worker's stores.
    static func replayStack(deadLetterPartitions: Int32 = 1) async throws
        -> (DeliverySemanticsTests.Stack, KafkaMockCluster, KafkaProducer, WorkerStores) {
        let stack = try await DeliverySemanticsTests.stack()
        let cluster = try KafkaMockCluster(brokers: 1, logger: MigratedDatabase.logger)
        try cluster.createTopic("push.dlq", partitions: deadLetterPartitions)
        try cluster.createTopic("push.notifications", partitions: 1)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: MigratedDatabase.logger)
        return (stack, cluster, producer, WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger))
    }

    func testAReplayReSendsAndALaterRunWithAnotherFilterFindsWhatTheFirstSkipped() async throws {
        let (stack, cluster, producer, store) = try await Self.replayStack(deadLetterPartitions: 2)
        let (processor, router) = try stack.processor(store: store)

        // Two notifications on their last attempt while APNs answers 503: retries exhausted.
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let x = UUID(), y = UUID()
        let tokenX = DeliverySemanticsTests.token(201), tokenY = DeliverySemanticsTests.token(202)
        var last = RetryHeaders()
        last.attempt = stack.configuration.retry.maxAttempts
        let exhausted = try await processor.outcome(of: [
            DeliverySemanticsTests.message(id: x, tokens: [tokenX], offset: 0, topic: "push.retry.10m", headers: last.kafkaHeaders),
            DeliverySemanticsTests.message(id: y, tokens: [tokenY], offset: 1, topic: "push.retry.10m", headers: last.kafkaHeaders),
        ])
        XCTAssertEqual(exhausted.deliveries.map(\.status), [.deadLettered, .deadLettered])
        XCTAssertEqual(exhausted.outgoing.map(\.topic), ["push.dlq", "push.dlq"])
        for m in exhausted.outgoing { try await producer.send(topic: m.topic, key: m.key, value: m.value, headers: m.headers) }
        try await store.writer.write(exhausted)
        try stack.simulator.setScenarios([])
        let requestsBefore = stack.apnsRequests

        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: "replay-test", logger: MigratedDatabase.logger)
        let replay = DeadLetterReplay(reader: reader, producer: producer, connection: stack.db.connection, logger: MigratedDatabase.logger)
        func sendIntake(_ expected: Int) async throws {
            let intake = try await reader.scan(topic: "push.notifications")
            XCTAssertEqual(intake.count, expected)
            guard let newest = intake.last else { return }
            XCTAssertEqual(newest.headers.first { $0.name == "pushfleet-replayed-from" }.map { String(decoding: $0.value, as: UTF8.self) }?
                .hasPrefix("push.dlq/"), true)
            try await store.writer.write(try await processor.outcome(of: [newest]))
        }

        // A dry run says exactly what the real run does, and changes nothing.
        let dry = try await replay.run(topics: TopicNames(), filter: .init(notificationID: x), dryRun: true)
        XCTAssertEqual(dry.replayed.map(\.notificationID), [x])
        XCTAssertEqual(dry.replayed.map(\.ledgerRows), [1])
        XCTAssertEqual(dry.skipped, 1)
        let afterDry = try await reader.scan(topic: "push.notifications")
        XCTAssertEqual(afterDry.count, 0, "a dry run publishes nothing")

        // By id: X is re-sent and accepted.
        let byID = try await replay.run(topics: TopicNames(), filter: .init(notificationID: x), dryRun: false)
        XCTAssertEqual(byID.replayed, dry.replayed, "the real run did what the dry run listed")
        let reopened = try await stack.db.row("SELECT status, replays, replay_of FROM deliveries WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(reopened["status"], "pending")
        XCTAssertEqual(reopened["replays"], "1")
        try await sendIntake(1)
        XCTAssertEqual(stack.apnsRequests - requestsBefore, 1, "the replayed delivery reached APNs")
        let accepted = try await stack.db.row("SELECT status, attempts FROM deliveries WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(accepted["status"], "accepted")

        // By reason, later: Y (skipped by the first run's filter) is still there; X is not replayed twice.
        let byReason = try await replay.run(topics: TopicNames(), filter: .init(reasonContains: "ServiceUnavailable"), dryRun: false)
        XCTAssertEqual(byReason.replayed.map(\.notificationID), [y])
        XCTAssertEqual(byReason.alreadyReplayed, 1)
        try await sendIntake(2)
        XCTAssertEqual(stack.apnsRequests - requestsBefore, 2)
        let yRow = try await stack.db.row("SELECT status FROM deliveries WHERE notification_id = $1", [.uuid(y)])
        XCTAssertEqual(yRow["status"], "accepted")
        let trail = try await stack.db.row("SELECT count(*) AS n FROM dlq_replays")
        XCTAssertEqual(trail["n"], "2")

        // Nothing left: a third run replays nothing unless asked to go again.
        let third = try await replay.run(topics: TopicNames(), filter: .init(), dryRun: true)
        XCTAssertEqual(third.replayed.count, 0)
        XCTAssertEqual(third.alreadyReplayed, 2)
        let again = try await replay.run(topics: TopicNames(), filter: .init(again: true), dryRun: true)
        XCTAssertEqual(again.replayed.count, 2)

        await reader.close()
        await producer.close()
        router.shutdown()
        try await stack.close()
    }

    /// A replay starts a new attempt series: a delivery dead-lettered after
    /// `retry.max_attempts` real attempts and accepted on the replay's first
    /// try has `attempts` 1 (the replay's series), never more than the limit;
    /// the series it was dead-lettered after stays in `delivery_replays`, and
    /// the dead letter stays in `dead_letters_daily`, marked replayed, and
    /// `delivery_replays_daily` says the replay recovered it (the report's
    /// side: `AnalyticsReportTests`). `--reason-contains` matches whatever the case,
    /// and a dry run logs what it would do, not that it did it.
    func testAReplayCountsAttemptsPerSeriesAndKeepsTheDeadLetterInTheStory() async throws {
        let (stack, cluster, producer, store) = try await Self.replayStack()
        let (processor, router) = try stack.processor(store: store)
        let maxAttempts = stack.configuration.retry.maxAttempts

        // Every attempt of the series made for real: APNs answers 503 until retries are exhausted.
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let x = UUID(), created = Date().addingTimeInterval(-60)
        let tokenX = DeliverySemanticsTests.token(211)
        for attempt in 1...maxAttempts {
            var headers = RetryHeaders()
            headers.attempt = attempt
            let outcome = try await processor.outcome(of: [DeliverySemanticsTests.message(
                id: x, createdAt: created, tokens: [tokenX], offset: Int64(attempt),
                topic: attempt == 1 ? "push.notifications" : "push.retry.5s", headers: attempt == 1 ? [] : headers.kafkaHeaders)])
            XCTAssertEqual(outcome.deliveries.map(\.status), [attempt < maxAttempts ? .retrying : .deadLettered], "attempt \(attempt)")
            for m in outcome.outgoing where m.topic == "push.dlq" {
                try await producer.send(topic: m.topic, key: m.key, value: m.value, headers: m.headers)
            }
            try await store.writer.write(outcome)
        }
        let dead = try await stack.db.row("SELECT status, attempts FROM deliveries WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(dead["status"], "dead_lettered")
        XCTAssertEqual(dead["attempts"], String(maxAttempts))
        try stack.simulator.setScenarios([])

        // A dry run, by the reason in another case: chosen, and logged as what it would do.
        let lines = Locked<[String]>([])
        let sink = LogLineSink { line in lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }
        let logger = Logger(label: "replay") { _ in JSONLogHandler(label: "replay", level: .info, sink: sink, metadataProvider: nil) }
        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: "series-test", logger: MigratedDatabase.logger)
        let dry = try await DeadLetterReplay(reader: reader, producer: nil, connection: stack.db.connection, logger: logger)
            .run(topics: TopicNames(), filter: .init(reasonContains: "serviceunavailable"), dryRun: true)
        XCTAssertEqual(dry.replayed.map(\.notificationID), [x], "--reason-contains ignores case")
        let logged = lines.withLock { $0 }.joined()
        XCTAssertTrue(logged.contains("would replay dead letter"), logged)
        XCTAssertFalse(logged.contains("\"dead letter replayed\""), "a dry run replays nothing:\n\(logged)")

        let replay = DeadLetterReplay(reader: reader, producer: producer, connection: stack.db.connection, logger: MigratedDatabase.logger)
        let run = try await replay.run(topics: TopicNames(), filter: .init(reasonContains: "SERVICEUNAVAILABLE"), dryRun: false)
        XCTAssertEqual(run.replayed.map(\.notificationID), [x])
        let intake = try await reader.scan(topic: "push.notifications")
        XCTAssertEqual(intake.count, 1)
        try await store.writer.write(try await processor.outcome(of: intake))

        // The row tells the replay's series; the series before is kept beside it.
        let row = try await stack.db.row(
            "SELECT status, attempts, replays, first_attempt_at = last_attempt_at AS one_series FROM deliveries WHERE notification_id = $1",
            [.uuid(x)])
        XCTAssertEqual(row["status"], "accepted")
        XCTAssertEqual(row["attempts"], "1", "attempts count the replay's series, at most retry.max_attempts")
        XCTAssertEqual(row["replays"], "1")
        XCTAssertEqual(row["one_series"], "t", "first and last attempt are the replay's")
        let before = try await stack.db.row("SELECT attempts, replay_of, dead_lettered_at IS NOT NULL AS dated FROM delivery_replays WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(before["attempts"], String(maxAttempts), "the dead-lettered series, kept")
        XCTAssertEqual(before["dated"], "t")
        XCTAssertEqual(before["replay_of"], run.replayed.first?.origin)

        // The dead letter is still in the day's dead letters, marked replayed; the replay recovered.
        let letters = try await stack.db.row(
            "SELECT sum(messages) AS messages, sum(replayed) AS replayed FROM dead_letters_daily WHERE source = 'delivery' AND kind = 'exhausted'")
        XCTAssertEqual(letters["messages"], "1")
        XCTAssertEqual(letters["replayed"], "1")
        let replays = try await stack.db.row("SELECT replayed, recovered, dead_lettered_again, in_progress FROM delivery_replays_daily")
        XCTAssertEqual(replays, ["replayed": "1", "recovered": "1", "dead_lettered_again": "0", "in_progress": "0"])

        await reader.close()
        await producer.close()
        router.shutdown()
        try await stack.close()
    }

    /// A replay whose message cannot be published puts the ledger back as it
    /// was: the row dead-lettered again with its series (attempts, first
    /// attempt, final time, reason) and the trail of the replay before it, and
    /// no record of the replay that did not happen.
    func testAReplayThatCannotBePublishedPutsTheLedgerBackAsItWas() async throws {
        let (stack, cluster, producer, store) = try await Self.replayStack()
        // Takes nothing over 1,000 bytes: the notification below is larger.
        let refusing = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, properties: ["message.max.bytes": "1000"],
                                         logger: MigratedDatabase.logger)
        var configuration = stack.configuration
        configuration.retry.maxAttempts = 1
        let (processor, router) = try stack.processor(store: store, configuration: configuration)
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let x = UUID()
        let json = """
            {"schema_version": 1, "id": "\(x.uuidString.lowercased())", "app": "\(DeliverySemanticsTests.app)",
             "created_at": "\(Timestamps.format(Date().addingTimeInterval(-60)))",
             "recipients": [{"token": "\(DeliverySemanticsTests.token(221))", "platform": "ios"}],
             "alert": {"title": "t", "body": "\(String(repeating: "b", count: 1_500))"}}
            """
        func deadLetter(_ message: KafkaMessage) async throws {
            let outcome = try await processor.outcome(of: [message])
            XCTAssertEqual(outcome.deliveries.map(\.status), [.deadLettered])
            for m in outcome.outgoing where m.topic == "push.dlq" {
                try await producer.send(topic: m.topic, key: m.key, value: m.value, headers: m.headers)
            }
            try await store.writer.write(outcome)
        }
        try await deadLetter(KafkaMessage(topic: "push.notifications", partition: 0, offset: 0, key: nil, value: Array(json.utf8)))

        // Replayed once and dead-lettered again: the row carries that replay's trail.
        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: "unmark-test", logger: MigratedDatabase.logger)
        let first = try await DeadLetterReplay(reader: reader, producer: producer, connection: stack.db.connection, logger: MigratedDatabase.logger)
            .run(topics: TopicNames(), filter: .init(), dryRun: false)
        XCTAssertEqual(first.count, 1)
        let replayed = try await reader.scan(topic: "push.notifications")
        XCTAssertEqual(replayed.count, 1)
        try await deadLetter(try XCTUnwrap(replayed.first))
        let columns = "status, attempts, first_attempt_at, final_at, detail, replays, replayed_at, replay_of"
        let before = try await stack.db.row("SELECT \(columns) FROM deliveries WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(before["status"], "dead_lettered")
        XCTAssertEqual(before["replays"], "1")
        XCTAssertEqual(before["replay_of"], "push.dlq/0/0")

        // The second dead letter's replay cannot be published.
        do {
            _ = try await DeadLetterReplay(reader: reader, producer: refusing, connection: stack.db.connection, logger: MigratedDatabase.logger)
                .run(topics: TopicNames(), filter: .init(), dryRun: false)
            XCTFail("a replay that was not published must fail")
        } catch {
            XCTAssertTrue("\(error)".contains("too large"), "refused by the producer, not anything before it: \(error)")
        }
        let after = try await stack.db.row("SELECT \(columns) FROM deliveries WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(after, before, "the row is as it was before the replay")
        let kept = try await stack.db.row("SELECT count(*) AS n, max(replay_of) AS of FROM delivery_replays WHERE notification_id = $1", [.uuid(x)])
        XCTAssertEqual(kept, ["n": "1", "of": "push.dlq/0/0"], "only the replay that happened is kept")
        let trail = try await stack.db.row("SELECT count(*) AS n FROM dlq_replays")
        XCTAssertEqual(trail["n"], "1")

        await reader.close()
        await refusing.close()
        await producer.close()
        router.shutdown()
        try await stack.close()
    }

    /// A flood of dead letters is read in chunks, never whole: the scan hands
    /// out at most `chunk` messages at a time, each once, in offset order per
    /// partition, and stops when asked; a replay run counts past what its
    /// report lists and tells its caller of each entry as it goes.
    func testAFloodOfDeadLettersIsReadInChunks() async throws {
        let db = try await MigratedDatabase.make()
        let cluster = try KafkaMockCluster(brokers: 1, logger: MigratedDatabase.logger)
        try cluster.createTopic("push.dlq", partitions: 3)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: MigratedDatabase.logger)
        let total = 1_250
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<total {
                // Not notifications (what a DLQ of junk holds): no id, so no ledger rows.
                group.addTask {
                    try await producer.send(topic: "push.dlq", key: Array("k\(n % 7)".utf8), value: Array("junk \(n) \u{0}\u{FF}".utf8),
                                            headers: [(RetryHeaders.reasonKey, Array("not JSON".utf8))])
                }
            }
            try await group.waitForAll()
        }
        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: "flood-test", logger: MigratedDatabase.logger)
        var sizes: [Int] = []
        var seen: [Int32: [Int64]] = [:]
        try await reader.scan(topic: "push.dlq", chunk: 100) { chunk in
            sizes.append(chunk.count)
            for m in chunk { seen[m.partition, default: []].append(m.offset) }
            return true
        }
        XCTAssertEqual(sizes.reduce(0, +), total)
        XCTAssertTrue(sizes.allSatisfy { $0 <= 100 }, "\(sizes)")
        XCTAssertEqual(seen.values.map(\.count).reduce(0, +), total)
        for (partition, offsets) in seen { XCTAssertEqual(offsets, Array(0..<Int64(offsets.count)), "partition \(partition)") }
        var early = 0
        try await reader.scan(topic: "push.dlq", chunk: 100) { chunk in
            early += chunk.count
            return false
        }
        XCTAssertEqual(early, 100, "stopped after the first chunk")

        let replay = DeadLetterReplay(reader: reader, producer: nil, connection: db.connection, logger: MigratedDatabase.logger)
        var heard = 0
        let report = try await replay.run(topics: TopicNames(), filter: .init(reasonContains: "not JSON", limit: 1_100), dryRun: true) { entry in
            heard += 1
            XCTAssertEqual(entry.ledgerRows, 0)
        }
        XCTAssertEqual(report.count, 1_100)
        XCTAssertEqual(heard, 1_100)
        XCTAssertEqual(report.replayed.count, min(1_100, DeadLetterReplay.Report.maxListed))
        XCTAssertEqual(report.skipped, 0)
        await reader.close()
        await producer.close()
    }

    func testABodyNamesItsLedgerRows() {
        let id = UUID()
        let devices = DeadLetterReplay.body(Array(#"{"id":"\#(id.uuidString)","recipients":[{"token":"a","platform":"ios"},{"topic":"news"}]}"#.utf8))
        XCTAssertEqual(devices.id, id)
        XCTAssertEqual(devices.tokens, ["a", "topic:news"])
        let user = DeadLetterReplay.body(Array(#"{"id":"\#(id.uuidString)","recipients":[{"user_id":"u"}]}"#.utf8))
        XCTAssertEqual(user.tokens, [], "a user id: every dead-lettered row of the id")
        XCTAssertNil(DeadLetterReplay.body([0xff, 0x00, 0x7b]).id, "not a notification: no ledger rows")
    }
}
