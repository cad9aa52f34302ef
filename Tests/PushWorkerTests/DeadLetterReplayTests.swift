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
    func testAReplayReSendsAndALaterRunWithAnotherFilterFindsWhatTheFirstSkipped() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let cluster = try KafkaMockCluster(brokers: 1, logger: MigratedDatabase.logger)
        try cluster.createTopic("push.dlq", partitions: 2)
        try cluster.createTopic("push.notifications", partitions: 1)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, logger: MigratedDatabase.logger)
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
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
