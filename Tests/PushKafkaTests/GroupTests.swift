import Foundation
import PushKafka
import XCTest

final class GroupTests: KafkaClusterTestCase, @unchecked Sendable {
    static let cooperative = ["partition.assignment.strategy": "cooperative-sticky"]

    /// A second member takes over part of the partitions through cooperative rebalancing
    /// (cooperative-sticky, the default, configured explicitly);
    /// offsets stored in the revoke handler are committed before the partitions move.
    func testTwoConsumersSplitPartitions() async throws {
        let topic = "split"
        try cluster.createTopic(topic, partitions: 6)
        let all = Set((0..<6).map { KafkaTopicPartition(topic: topic, partition: Int32($0)) })
        let producer = try makeProducer()
        for partition: Int32 in 0..<6 {
            for i in 0..<10 {
                try await producer.send(topic: topic, key: nil, value: bytes("p\(partition)-\(i)"), partition: partition)
            }
        }
        await producer.close()

        let firstEvents = MessageSink()
        let first = try makeConsumer(group: "split", topics: [topic], extra: Self.cooperative)
        first.setRebalanceHandler { [weak first] event in
            firstEvents.record(event)
            // Drain: pretend offsets 0...4 of each partition that goes were processed.
            if case .revoked(let partitions) = event {
                try? first?.storeOffsets(Dictionary(uniqueKeysWithValues: partitions.map { ($0, 5) }))
            }
        }
        let firstMessages = MessageSink()
        let alone = try await pollUntil([first], timeout: .seconds(20), into: [firstMessages]) {
            Set(try first.assignment()) == all && firstMessages.messages.count >= 60
        }
        XCTAssertTrue(alone, "first consumer should get all 6 partitions and their 60 messages")

        let secondEvents = MessageSink()
        let secondMessages = MessageSink()
        let second = try makeConsumer(group: "split", topics: [topic], extra: Self.cooperative)
        second.setRebalanceHandler { secondEvents.record($0) }
        let split = try await pollUntil([first, second], timeout: .seconds(40), into: [firstMessages, secondMessages]) {
            let a = Set(try first.assignment())
            let b = Set(try second.assignment())
            return !a.isEmpty && !b.isEmpty && a.isDisjoint(with: b) && a.union(b) == all
        }
        let a = Set(try first.assignment())
        let b = Set(try second.assignment())
        XCTAssertTrue(split, "assignments \(a) and \(b) should split all 6 partitions")
        XCTAssertTrue(a.isDisjoint(with: b))
        XCTAssertEqual(a.union(b), all)

        // The first member saw everything assigned, then (cooperatively) only what moved revoked.
        let firstAssigned = firstEvents.events.compactMap { if case .assigned(let p) = $0 { p } else { nil } }
        let firstRevoked = firstEvents.events.compactMap { if case .revoked(let p) = $0 { p } else { nil } }
        XCTAssertEqual(Set(firstAssigned.flatMap { $0 }), all)
        XCTAssertFalse(firstRevoked.isEmpty, "first consumer should have been told about revocation")
        XCTAssertEqual(Set(firstRevoked.flatMap { $0 }), b, "exactly what moved was revoked")
        let secondAssigned = secondEvents.events.compactMap { if case .assigned(let p) = $0 { p } else { nil } }
        XCTAssertEqual(Set(secondAssigned.flatMap { $0 }), b)

        // The second member continues where the revoke handler stored: offset 5 of each moved partition.
        _ = try await pollUntil([second], timeout: .seconds(10), into: [secondMessages]) {
            secondMessages.messages.count >= 5 * b.count
        }
        let received = secondMessages.messages
        XCTAssertEqual(received.count, 5 * b.count)
        for tp in b {
            let offsets = received.filter { $0.partition == tp.partition }.map(\.offset)
            XCTAssertEqual(offsets, Array(5..<10), "\(tp) should resume at the offset stored on revoke")
        }

        await second.close()
        await first.close()
        let closedEvents = secondEvents.events.compactMap { if case .revoked(let p) = $0 { p } else { nil } }
        XCTAssertEqual(Set(closedEvents.flatMap { $0 }), b, "close revokes through the handler")
    }
}
