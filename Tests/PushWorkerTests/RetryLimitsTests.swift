import Foundation
import PushCore
import PushKafka
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// A retry message is read again by intake's rules. What a worker writes to a
/// retry tier must pass them, or its rows would stay `retrying` for good: a
/// user id resolved to more devices than a message may name, and a
/// created_at that aged out of the window while the retry waited.
final class RetryLimitsTests: XCTestCase {
    /// 1,500 devices of two users (750 each: a user is sent to at most 1,000),
    /// every send failing: the retry messages name at most 1,000 recipients
    /// each, each decodes, and together they name every device once.
    func testAUserResolvedPastTheRecipientLimitRetriesInMessagesIntakeTakes() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let tokens = (0..<1_500).map { String(format: "%064x", 0xCD00_0000 + $0) }
        try await store.writer.write(BatchOutcome(deviceUpdates: tokens.enumerated().map {
            DeviceEvent(app: DeliverySemanticsTests.app, platform: .ios, token: $0.element, userID: $0.offset < 750 ? "crowd-a" : "crowd-b",
                        environment: "production", action: .register, at: Date().addingTimeInterval(-60))
        }))
        // Every send fails, but the circuit stays closed: each delivery is sent once and retried
        // (with the circuit open, the rest would be parked, not retried).
        var configuration = stack.configuration
        configuration.retry.circuitMinimumRequests = 100_000
        let (processor, _) = try stack.processor(store: store, configuration: configuration)
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let json = """
            {"schema_version": 1, "id": "\(UUID().uuidString.lowercased())", "app": "\(DeliverySemanticsTests.app)",
             "created_at": "\(Timestamps.format(Date()))", "recipients": [{"user_id": "crowd-a"}, {"user_id": "crowd-b"}], "alert": {"title": "t", "body": "b"}}
            """
        let outcome = try await processor.outcome(of: [
            KafkaMessage(topic: "push.notifications", partition: 0, offset: 0, key: nil, value: Array(json.utf8)),
        ])
        XCTAssertEqual(outcome.deliveries.count, 1_500)
        XCTAssertTrue(outcome.deliveries.allSatisfy { $0.status == .retrying }, "\(Set(outcome.deliveries.map(\.status)))")
        let retries = outcome.outgoing.filter { $0.topic.hasPrefix("push.retry.") }
        XCTAssertEqual(retries.count, outcome.outgoing.count)
        XCTAssertGreaterThanOrEqual(retries.count, 2, "1,500 recipients need two messages at least")
        var named: [String] = []
        for retry in retries {
            XCTAssertLessThanOrEqual(retry.value.count, IntakeLimits.maxMessageBytes)
            switch PushNotification.decode(retry.value) {
            case .failure(let error): XCTFail("a retry message intake refuses: \(error)")
            case .success(let n):
                XCTAssertLessThanOrEqual(n.recipients.count, IntakeLimits.maxRecipients)
                XCTAssertTrue(n.userRecipients.isEmpty)
                named += n.recipients.map(\.token)
            }
        }
        XCTAssertEqual(named.count, 1_500)
        XCTAssertEqual(Set(named), Set(tokens))
        try await store.writer.write(outcome)
        try await stack.close()
    }

    /// A retry whose created_at left the 28-day window while it waited expires
    /// (rows `expired`, nothing sent); the same message on the intake topic is
    /// refused, and a created_at too far in the future, or over a year old, is
    /// refused on a retry tier too.
    func testARetryThatAgedOutOfTheWindowExpires() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let (processor, _) = try stack.processor(store: store)
        let aged = Date().addingTimeInterval(-29 * 86_400)
        var retry = RetryHeaders()
        retry.attempt = 2
        let token = String(format: "%064x", 0xEE01)
        let outcome = try await processor.outcome(of: [
            DeliverySemanticsTests.message(createdAt: aged, tokens: [token], offset: 0, topic: "push.retry.5s", headers: retry.kafkaHeaders),
            DeliverySemanticsTests.message(createdAt: aged, tokens: [token], offset: 1, topic: "push.notifications"),
            DeliverySemanticsTests.message(createdAt: Date().addingTimeInterval(7_200), tokens: [token], offset: 2,
                                           topic: "push.retry.5s", headers: retry.kafkaHeaders),
            DeliverySemanticsTests.message(createdAt: Date().addingTimeInterval(-400 * 86_400), tokens: [token], offset: 3,
                                           topic: "push.retry.5s", headers: retry.kafkaHeaders),
        ])
        XCTAssertEqual(outcome.deliveries.map(\.status), [.expired])
        XCTAssertEqual(outcome.deliveries.first?.key.token, token)
        XCTAssertEqual(outcome.rejections.map(\.kind), ["created_at_out_of_window", "created_at_out_of_window", "created_at_out_of_window"])
        XCTAssertEqual(outcome.rejections.map(\.offset), [1, 2, 3], "intake's window on intake; on a retry tier a year back")
        XCTAssertEqual(stack.apnsRequests, 0, "nothing sent")
        try await store.writer.write(outcome)
        try await stack.close()
    }

    /// A key near Kafka's message size would make every retry of its message
    /// too big to produce: a retry keeps the key only up to 4,096 bytes.
    func testAHugeKeyIsNotCopiedOntoRetries() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        // Every send fails, but the circuit stays closed: each delivery is sent once and retried
        // (with the circuit open, the rest would be parked, not retried).
        var configuration = stack.configuration
        configuration.retry.circuitMinimumRequests = 100_000
        let (processor, _) = try stack.processor(store: store, configuration: configuration)
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        func message(key: [UInt8], offset: Int64) -> KafkaMessage {
            let base = DeliverySemanticsTests.message(tokens: [String(format: "%064x", 0xEE10 + offset)], offset: offset)
            return KafkaMessage(topic: base.topic, partition: base.partition, offset: base.offset, key: key, value: base.value)
        }
        let fine = Array(repeating: UInt8(ascii: "k"), count: 4_096)
        let outcome = try await processor.outcome(of: [
            message(key: Array(repeating: UInt8(ascii: "k"), count: 900_000), offset: 0), message(key: fine, offset: 1),
        ])
        XCTAssertEqual(outcome.deliveries.map(\.status), [.retrying, .retrying])
        XCTAssertEqual(outcome.outgoing.count, 2)
        XCTAssertEqual(outcome.outgoing.map { $0.key?.count }, [nil, 4_096], "the huge key dropped, a recipient-sized one kept")
        try await stack.close()
    }
}
