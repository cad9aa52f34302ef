import Foundation
import Logging
import PushCore
import PushKafka
import XCTest
@testable import PushWorker

/// Backpressure: the pure pause bookkeeping, and the poll loop's use of it
/// against a real librdkafka mock cluster.
final class PipelineBackpressureTests: XCTestCase {
    let a = KafkaTopicPartition(topic: "t", partition: 0)
    let b = KafkaTopicPartition(topic: "t", partition: 1)

    func testPerPartitionBoundPausesOnlyThatPartitionAndResumesBelowIt() {
        var pauses = PartitionPauses()
        var change = pauses.backpressure(inFlight: [a: 10, b: 3], total: 100, perPartition: 10)
        XCTAssertEqual(change.pause, [a])
        XCTAssertEqual(change.resume, [])
        change = pauses.backpressure(inFlight: [a: 12, b: 3], total: 100, perPartition: 10)
        XCTAssertEqual(change.pause, [], "already paused: no second pause")
        change = pauses.backpressure(inFlight: [a: 9, b: 3], total: 100, perPartition: 10)
        XCTAssertEqual(change.resume, [a])
        XCTAssertFalse(pauses.has(.backpressure, a))
    }

    func testTotalBoundPausesEveryPartition() {
        var pauses = PartitionPauses()
        let change = pauses.backpressure(inFlight: [a: 6, b: 4], total: 10, perPartition: 100)
        XCTAssertEqual(Set(change.pause), [a, b])
        let after = pauses.backpressure(inFlight: [a: 5, b: 4], total: 10, perPartition: 100)
        XCTAssertEqual(Set(after.resume), [a, b])
    }

    /// A partition paused for a not-yet-due retry is not paused again by
    /// backpressure, and not resumed when backpressure ends while the retry
    /// still holds it (nor when the retry ends while backpressure holds it).
    func testDelayedRetryAndBackpressureNeverResumeEachOthersPause() {
        var pauses = PartitionPauses()
        XCTAssertTrue(pauses.add(.delayedRetry, a), "first reason: pause")
        let over = pauses.backpressure(inFlight: [a: 50], total: 100, perPartition: 10)
        XCTAssertEqual(over.pause, [], "already paused for the retry")
        let under = pauses.backpressure(inFlight: [a: 0], total: 100, perPartition: 10)
        XCTAssertEqual(under.resume, [], "the retry still holds it")
        XCTAssertTrue(pauses.remove(.delayedRetry, a), "last reason gone: resume")

        _ = pauses.backpressure(inFlight: [b: 50], total: 100, perPartition: 10)
        XCTAssertFalse(pauses.add(.delayedRetry, b))
        XCTAssertFalse(pauses.remove(.delayedRetry, b), "backpressure still holds it")
        XCTAssertEqual(pauses.backpressure(inFlight: [b: 0], total: 100, perPartition: 10).resume, [b])
    }

    /// Held retries count against `max_in_flight_bytes` until released or
    /// forgotten with their partition.
    func testHeldRetriesCountTheirBytesUntilReleasedOrDropped() {
        var delayed = DelayedPartitions()
        let now = Date()
        func message(_ tp: KafkaTopicPartition, _ offset: Int64, bytes: Int) -> KafkaMessage {
            KafkaMessage(topic: tp.topic, partition: tp.partition, offset: offset, key: [1, 2], value: [UInt8](repeating: 0, count: bytes),
                         headers: [("pushfleet-attempt", Array("2".utf8))])
        }
        let dueAt: [Int64: Date] = [0: now, 1: now + 5, 2: now + 10]
        func due(_ m: KafkaMessage) -> Date? { m.topic == b.topic && m.partition == b.partition ? now + 5 : dueAt[m.offset] }
        XCTAssertFalse(delayed.hold(message(a, 0, bytes: 100), now: now, due: { now }), "due now: not held")
        XCTAssertEqual(delayed.heldBytes, 0)
        XCTAssertTrue(delayed.hold(message(a, 1, bytes: 100), now: now, due: { now + 5 }))
        XCTAssertTrue(delayed.hold(message(a, 2, bytes: 50), now: now, due: { XCTFail("held behind: not asked yet"); return nil }))
        XCTAssertTrue(delayed.hold(message(b, 0, bytes: 1_000), now: now, due: { now + 5 }))
        let overhead = 2 + "pushfleet-attempt".utf8.count + 1
        XCTAssertEqual(delayed.heldBytes, 1_150 + 3 * overhead)
        var released: [KafkaMessage] = []
        XCTAssertEqual(Set(delayed.due(at: now + 6, recheck: due, releaseInto: { released += $0 })), [b])
        XCTAssertEqual(released.map(\.offset).sorted(), [0, 1])
        XCTAssertEqual(delayed.heldBytes, 50 + overhead, "a's second message is still held")
        delayed.drop([a])
        XCTAssertEqual(delayed.heldBytes, 0)
    }

    func testRevokedPartitionsAreForgotten() {
        var pauses = PartitionPauses()
        _ = pauses.backpressure(inFlight: [a: 50, b: 50], total: 1000, perPartition: 10)
        pauses.drop([a])
        XCTAssertEqual(pauses.partitions(.backpressure), [b])
        // b left the assignment without an event yet: its reason goes, nothing to pause.
        XCTAssertEqual(pauses.backpressure(inFlight: [:], total: 1000, perPartition: 10).resume, [b])
    }

    /// At the bound the loop pauses and keeps polling: nothing more is taken,
    /// the member stays in the group well past `session.timeout.ms`, and once
    /// work completes exactly the paused partitions resume where they stopped:
    /// every offset taken once, none skipped.
    func testAtTheBoundPollingContinuesNothingIsTakenAndResumeContinuesInPlace() async throws {
        var logger = Logger(label: "pipeline.backpressure")
        logger.logLevel = .warning
        let cluster = try KafkaMockCluster(brokers: 3, logger: logger)
        let topic = "bp"
        try cluster.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(bootstrapServers: cluster.bootstrapServers, properties: ["linger.ms": "2"], logger: logger)
        for i in 0..<300 {
            try await producer.send(topic: topic, key: nil, value: Array("m\(i)".utf8), partition: Int32(i % 2))
        }
        await producer.close()
        let consumer = try KafkaConsumer(
            bootstrapServers: cluster.bootstrapServers, groupID: "bp", topics: [topic],
            properties: ["session.timeout.ms": "3000", "heartbeat.interval.ms": "300", "fetch.wait.max.ms": "50"],
            logger: logger)
        let book = OffsetBook()
        let events = Locked<[String]>([])
        consumer.setRebalanceHandler { event in
            switch event {
            case .assigned(let p): book.assign(p); events.withLock { $0.append("assigned \(p.count)") }
            case .revoked(let p), .lost(let p): book.revoke(p); events.withLock { $0.append("revoked/lost \(p.count)") }
            }
        }
        let perPartition = 50
        var pauses = PartitionPauses()
        var taken: [Int32: [Int64]] = [:]
        var pending: [KafkaMessage] = []
        var maxInFlight = 0
        func step() async throws {
            for m in book.begin(try await consumer.poll(maxMessages: 10, timeout: .milliseconds(20))) {
                taken[m.partition, default: []].append(m.offset)
                pending.append(m)
            }
            let inFlight = book.inFlightByPartition()
            maxInFlight = max(maxInFlight, inFlight.values.max() ?? 0)
            let change = pauses.backpressure(inFlight: inFlight, total: 10_000, perPartition: perPartition)
            if !change.pause.isEmpty { try consumer.pause(change.pause) }
            if !change.resume.isEmpty { try consumer.resume(change.resume) }
        }
        // Take until both partitions are throttled.
        var deadline = ContinuousClock.now + .seconds(20)
        while pauses.partitions(.backpressure).count < 2, ContinuousClock.now < deadline { try await step() }
        XCTAssertEqual(Set(pauses.partitions(.backpressure)), [KafkaTopicPartition(topic: topic, partition: 0), KafkaTopicPartition(topic: topic, partition: 1)])
        XCTAssertEqual(consumer.pausedPartitions.count, 2)
        let takenAtBound = pending.count

        // Nothing completes for 5 s (> session.timeout.ms): the loop keeps polling.
        let hold = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < hold { try await step() }
        XCTAssertEqual(pending.count, takenAtBound, "nothing taken while throttled")
        XCTAssertLessThanOrEqual(maxInFlight, perPartition + 10, "at most one poll beyond the bound")
        XCTAssertEqual(try consumer.assignment().count, 2, "still a member with its assignment")
        XCTAssertEqual(events.withLock { $0 }, ["assigned 2"], "no rebalance while throttled")

        // Complete everything as it comes; throttling lifts and the rest arrives in place.
        deadline = ContinuousClock.now + .seconds(30)
        while taken.values.map(\.count).reduce(0, +) < 300, ContinuousClock.now < deadline {
            let ticket = book.dispatch(pending)
            pending = []
            for (tp, offset) in book.complete(ticket) { try consumer.storeOffset(tp, offset: offset) }
            try await step()
        }
        XCTAssertEqual(taken[0], Array(0..<150), "partition 0: every offset once, in order")
        XCTAssertEqual(taken[1], Array(0..<150), "partition 1: every offset once, in order")
        await consumer.close()
        withExtendedLifetime(cluster) {}
    }
}
