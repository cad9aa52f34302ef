import Foundation
import PushCore
import PushKafka
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 17: every DLQ reason header printed its kind twice
/// (`undecodable: undecodable: $: …`). The header says the kind once, then the path.
final class DeadLetterReasonTests: XCTestCase {
    func testTheKindIsNamedOnceInTheDeadLetterReason() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let processor = try RecipientResolutionTests.processor(pool)
        let outcome = try await processor.outcome(of: [
            KafkaMessage(topic: "push.notifications", partition: 0, offset: 0, key: nil, value: Array("{not json".utf8)),
            KafkaMessage(topic: "push.notifications", partition: 0, offset: 1, key: nil,
                         value: Array(#"{"schema_version": 7, "id": "6f1c1c1e-0000-4000-8000-000000000001"}"#.utf8)),
        ])
        let reasons = outcome.outgoing.map {
            RetryHeaders(message: KafkaMessage(topic: $0.topic, partition: 0, offset: 0, key: nil, value: [], headers: $0.headers)).reason ?? ""
        }
        XCTAssertEqual(reasons.count, 2)
        for (reason, kind) in zip(reasons, ["not_json", "unsupported_schema_version"]) {
            XCTAssertTrue(reason.hasPrefix("\(kind): "), reason)
            XCTAssertEqual(reason.components(separatedBy: kind).count - 1, 1, "the kind once: \(reason)")
        }
        await pool.close()
    }

    /// Each dead-lettered row's detail named every failed recipient of its
    /// message: 1,000 recipients made 1,000 rows of ~20 KB each (20 MB of
    /// text for one message; a retry batch of such messages, gigabytes in one
    /// bind). Now a row names its own failure and the message's header sums
    /// up the reasons, each once with its count.
    func testExhaustedRecipientsEachKeepTheirOwnReason() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let (processor, _) = try stack.processor(store: store)
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        var last = RetryHeaders()
        last.attempt = stack.configuration.retry.maxAttempts
        let tokens = (0..<1_000).map { String(format: "%064x", 0xAB00_0000 + $0) }
        let outcome = try await processor.outcome(of: [
            DeliverySemanticsTests.message(tokens: tokens, topic: "push.retry.10m", headers: last.kafkaHeaders),
        ])
        XCTAssertEqual(outcome.deliveries.count, 1_000)
        // The 503s open APNs' circuit breaker after a few dozen: the rest are held back
        // unsent (a retry that spends no attempt), the ones that got a 503 are exhausted.
        let dead = outcome.deliveries.filter { $0.status == .deadLettered }
        XCTAssertGreaterThan(dead.count, 1)
        XCTAssertEqual(Set(dead.compactMap(\.detail)), ["retries exhausted after attempt \(last.attempt): ServiceUnavailable"])
        XCTAssertEqual(dead.compactMap(\.detail).count, dead.count)
        let deadLetters = outcome.outgoing.filter { $0.topic == "push.dlq" }
        XCTAssertEqual(deadLetters.count, 1)
        let headers = RetryHeaders(message: KafkaMessage(topic: "push.dlq", partition: 0, offset: 0, key: nil, value: [],
                                                         headers: deadLetters.first?.headers ?? []))
        XCTAssertEqual(headers.lastError, "ServiceUnavailable ×\(dead.count)")
        XCTAssertEqual(headers.reason, "retries exhausted after attempt \(last.attempt): ServiceUnavailable ×\(dead.count)")
        let text = outcome.deliveries.reduce(0) { $0 + ($1.detail?.utf8.count ?? 0) }
        XCTAssertLessThan(text, 1_000 * 100, "a row's detail is about its own recipient")
        try await store.writer.write(outcome)
        try await stack.close()
    }

    func testTheReasonSummaryIsLinearAndBounded() {
        XCTAssertEqual(RetryScheduler.reasonSummary(["A", "B", "A", "C", "A"]), "A ×3,B,C")
        XCTAssertEqual(RetryScheduler.reasonSummary([]), "")
        let many = (0..<5_000).map { "Reason\($0)" }
        let summary = RetryScheduler.reasonSummary(many)
        XCTAssertLessThanOrEqual(summary.utf8.count, RetryHeaders.maxLastErrorBytes)
        XCTAssertTrue(summary.hasPrefix("Reason0,Reason1,") && summary.hasSuffix("…"), summary)
    }
}
