import Foundation
import PushCore
import PushKafka
import XCTest
@testable import PushWorker

/// Issue 17: every DLQ reason header printed its kind twice
/// (`undecodable: undecodable: $: …`). The header says the kind once, then the path.
final class DeadLetterReasonTests: XCTestCase {
    func testTheKindIsNamedOnceInTheDeadLetterReason() async throws {
        let db = try await AnalyticsDatabase.make()
        let pool = db.pool()
        let processor = try RecipientResolutionTests.processor(pool)
        let outcome = try await processor.process([
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
}
