import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 15, item 4: `pushfleet-*` headers steer retries only on the retry
/// topics the fleet writes. A producer that sets them on intake cannot skip
/// attempts, fake a due time or an origin; the worker ignores and counts them.
final class HeaderTrustTests: XCTestCase {
    private func message(topic: String) -> KafkaMessage {
        KafkaMessage(topic: topic, partition: 1, offset: 42, key: nil, value: Array("{}".utf8), headers: [
            (RetryHeaders.attemptKey, Array("5".utf8)),
            (RetryHeaders.dueAtKey, Array("99999999999999".utf8)),
            (RetryHeaders.originTopicKey, Array("elsewhere".utf8)),
            (RetryHeaders.originPartitionKey, Array("9".utf8)),
            (RetryHeaders.originOffsetKey, Array("9".utf8)),
        ])
    }

    func testRetryHeadersAreIgnoredOnProducerTopicsAndCounted() throws {
        let processor = try RecipientResolutionTests.processor(PostgresPool(url: "postgresql://127.0.0.1:1/none", size: 1,
                                                                            logger: MigratedDatabase.logger))
        for topic in ["push.notifications", "push.devices"] {
            var headers = processor.decoder.trustedHeaders(of: message(topic: topic))
            XCTAssertEqual(headers.attempt, 1, topic)
            XCTAssertNil(headers.dueAt, topic)
            headers.setOrigin(from: message(topic: topic))
            XCTAssertEqual(headers.origin, MessageOrigin(topic: topic, partition: 1, offset: 42))
        }
        XCTAssertEqual(processor.counters.withLock { $0.untrustedHeaders }, 2)

        let retry = processor.decoder.trustedHeaders(of: message(topic: "push.retry.5s"))
        XCTAssertEqual(retry.attempt, 5)
        XCTAssertNotNil(retry.dueAt)
        XCTAssertEqual(retry.origin, MessageOrigin(topic: "elsewhere", partition: 9, offset: 9))
        XCTAssertEqual(processor.counters.withLock { $0.untrustedHeaders }, 2)

        let plain = KafkaMessage(topic: "push.notifications", partition: 0, offset: 1, key: nil, value: [],
                                 headers: [("traceparent", Array("00-abc".utf8))])
        XCTAssertEqual(processor.decoder.trustedHeaders(of: plain), RetryHeaders())
        XCTAssertEqual(processor.counters.withLock { $0.untrustedHeaders }, 2)
    }

    /// A retry message whose attempt number cannot be read is sent as attempt
    /// 1 (it cannot be told from a first try), and counted: workers always
    /// write a number of at least 1, so such a message came from elsewhere.
    func testUnreadableRetryAttemptsAreCountedAndReadAsTheFirst() throws {
        let processor = try RecipientResolutionTests.processor(PostgresPool(url: "postgresql://127.0.0.1:1/none", size: 1,
                                                                            logger: MigratedDatabase.logger))
        func retry(_ attempt: [UInt8]?, topic: String = "push.retry.10m") -> KafkaMessage {
            KafkaMessage(topic: topic, partition: 2, offset: 7, key: nil, value: Array("{}".utf8),
                         headers: attempt.map { [(RetryHeaders.attemptKey, $0)] } ?? [("traceparent", Array("00-abc".utf8))])
        }
        let unreadable: [[UInt8]?] = [nil, Array("".utf8), Array("abc".utf8), Array("0".utf8), Array("-3".utf8),
                                      Array("99999999999999999999999".utf8), [0x33, 0x00], [0xFF, 0xFE], Array(" 2".utf8)]
        for (i, header) in unreadable.enumerated() {
            XCTAssertEqual(processor.decoder.trustedHeaders(of: retry(header)).attempt, 1, "\(header.map { Array($0) } ?? [])")
            XCTAssertEqual(processor.counters.withLock { $0.unreadableRetryAttempts }, i + 1)
        }
        XCTAssertEqual(processor.decoder.trustedHeaders(of: retry(Array("2".utf8))).attempt, 2)
        XCTAssertEqual(processor.decoder.trustedHeaders(of: retry(Array("999999".utf8))).attempt, RetryHeaders.maxAttempt)
        // Intake messages carry no attempt number: nothing to count there.
        XCTAssertEqual(processor.decoder.trustedHeaders(of: retry(nil, topic: "push.notifications")).attempt, 1)
        XCTAssertEqual(processor.counters.withLock { $0.unreadableRetryAttempts }, unreadable.count)
    }

    /// A due time far in the future (or a huge attempt number) on a retry
    /// topic cannot hold a partition paused for ever or overflow arithmetic.
    func testRetryHeaderValuesAreBounded() {
        let topics = TopicNames(prefix: "push", tiers: RetryTier.defaults)
        let now = Date()
        let hostile = KafkaMessage(topic: "push.retry.5s", partition: 0, offset: 1, key: nil, value: [], headers: [
            (RetryHeaders.attemptKey, Array("9223372036854775807".utf8)),
            (RetryHeaders.dueAtKey, Array("253402300799999".utf8)),
        ])
        let due = topics.dueTime(of: hostile, now: now)
        XCTAssertEqual(due?.timeIntervalSince(now) ?? -1, 5, accuracy: 0.001)
        XCTAssertEqual(RetryHeaders(message: hostile).attempt, RetryHeaders.maxAttempt)
        XCTAssertNil(topics.dueTime(of: KafkaMessage(topic: "push.notifications", partition: 0, offset: 1, key: nil, value: [],
                                                     headers: hostile.headers), now: now))
        let huge = KafkaMessage(topic: "push.retry.5s", partition: 0, offset: 1, key: nil, value: [], headers: [
            (RetryHeaders.dueAtKey, Array("9223372036854775807".utf8)), (RetryHeaders.firstFailureAtKey, Array("-5".utf8)),
        ])
        XCTAssertNil(RetryHeaders(message: huge).dueAt)
        XCTAssertNil(RetryHeaders(message: huge).firstFailureAt)
        var far = RetryHeaders()
        far.dueAt = Date(timeIntervalSince1970: 1e300)
        XCTAssertEqual(far.kafkaHeaders.first { $0.name == RetryHeaders.dueAtKey }.map { String(decoding: $0.value, as: UTF8.self) },
                       "253402300799999")
    }

    /// Text headers anyone with produce rights on a retry topic can write:
    /// an origin topic that is no Kafka topic name is not taken (the message's
    /// own place is), and the error and reason are cut as they would be written.
    func testRetryHeaderTextsAreBoundedAndTheOriginIsATopicName() {
        func headers(_ topic: String) -> RetryHeaders {
            RetryHeaders(message: KafkaMessage(topic: "push.retry.5s", partition: 3, offset: 9, key: nil, value: [], headers: [
                (RetryHeaders.originTopicKey, Array(topic.utf8)), (RetryHeaders.originPartitionKey, Array("1".utf8)),
                (RetryHeaders.originOffsetKey, Array("2".utf8)),
                (RetryHeaders.lastErrorKey, Array(String(repeating: "e", count: 100_000).utf8)),
                (RetryHeaders.reasonKey, Array(String(repeating: "r", count: 100_000).utf8)),
            ]))
        }
        let good = headers("push.notifications")
        XCTAssertEqual(good.origin, MessageOrigin(topic: "push.notifications", partition: 1, offset: 2))
        XCTAssertEqual(good.lastError?.utf8.count, RetryHeaders.maxLastErrorBytes)
        XCTAssertEqual(good.reason?.utf8.count, RetryHeaders.maxReasonBytes)
        // One Character of 200 KB ("a" and 100,000 combining accents) is cut by its bytes too.
        let cluster = "a" + String(repeating: "\u{301}", count: 100_000)
        let clustered = RetryHeaders(message: KafkaMessage(topic: "push.retry.5s", partition: 0, offset: 1, key: nil, value: [], headers: [
            (RetryHeaders.lastErrorKey, Array(cluster.utf8)), (RetryHeaders.reasonKey, Array(cluster.utf8)),
        ]))
        XCTAssertLessThanOrEqual(clustered.lastError?.utf8.count ?? .max, RetryHeaders.maxLastErrorBytes)
        XCTAssertLessThanOrEqual(clustered.reason?.utf8.count ?? .max, RetryHeaders.maxReasonBytes)
        var written = RetryHeaders(message: KafkaMessage(topic: "push.retry.5s", partition: 0, offset: 1, key: nil, value: []))
        written.lastError = cluster
        written.reason = cluster
        for (name, value) in written.kafkaHeaders where [RetryHeaders.lastErrorKey, RetryHeaders.reasonKey].contains(name) {
            XCTAssertLessThanOrEqual(value.count, RetryHeaders.maxReasonBytes, name)
        }
        XCTAssertNotNil(headers(String(repeating: "t", count: 249)).origin)
        for bad in [String(repeating: "t", count: 250), String(repeating: "t", count: 900_000), "", "a b", "tópico", "a/b", "a\u{0}b"] {
            var h = headers(bad)
            XCTAssertNil(h.origin, "\(bad.prefix(20))")
            h.setOrigin(from: KafkaMessage(topic: "push.retry.5s", partition: 3, offset: 9, key: nil, value: []))
            XCTAssertEqual(h.origin, MessageOrigin(topic: "push.retry.5s", partition: 3, offset: 9), "the message's own place")
        }
    }
}
