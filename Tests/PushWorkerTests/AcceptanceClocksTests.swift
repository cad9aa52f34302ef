import Foundation
import PushCore
import PushKafka
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// Two clocks end at a provider's acceptance, and each metric is named for
/// where it starts: `pushfleet_created_to_accepted_seconds` at the
/// notification's `created_at` (the producer's clock, retries included),
/// `pushfleet_enqueued_to_accepted_seconds` at the Kafka timestamp of the
/// intake message the accepted send came from (the fleet's own wait and send).
/// Sends go through the worker's pipeline to the simulator over TLS + HTTP/2.
final class AcceptanceClocksTests: XCTestCase {
    func testCreatedAndEnqueuedToAcceptedAreTwoMetricsEachNamedForItsClock() async throws {
        let stack = try await DeliverySemanticsTests.stack()
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let router = try ProviderRouter(configuration: stack.configuration, logger: MigratedDatabase.logger)
        let pipeline = BatchPipeline(
            stores: store, router: router, producer: nil, permits: nil, topics: TopicNames(prefix: "push", tiers: RetryTier.defaults),
            retryPolicy: stack.configuration.retry.policy, maxConcurrentSends: 16, counters: Locked(WorkerCounters()),
            observer: metrics, logger: MigratedDatabase.logger, registry: stack.configuration.registry)

        func samples() -> [String: Double] {
            var out: [String: Double] = [:]
            for line in exposition.text().split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                out[String(line[..<space])] = value
            }
            return out
        }
        let created = "pushfleet_created_to_accepted_seconds", enqueued = "pushfleet_enqueued_to_accepted_seconds"

        // Created 200 s before it reached Kafka (a producer that held it), enqueued 30 s ago.
        let now = Date()
        var intake = DeliverySemanticsTests.message(createdAt: now.addingTimeInterval(-230), tokens: [DeliverySemanticsTests.token(231)])
        intake.timestamp = now.addingTimeInterval(-30)
        let first = try await pipeline.outcome(of: [intake])
        XCTAssertEqual(first.deliveries.map(\.status), [.accepted], "\(first.deliveries.map { $0.providerReason ?? "-" })")
        var s = samples()
        XCTAssertEqual(s[#"\#(created)_count{provider="apns"}"#], 1)
        XCTAssertEqual(s[#"\#(enqueued)_count{provider="apns"}"#], 1)
        // Both clocks end at the same acceptance: they differ by exactly the 200 s
        // between created_at and the Kafka timestamp, whatever the send took.
        let createdSum = try XCTUnwrap(s[#"\#(created)_sum{provider="apns"}"#])
        let enqueuedSum = try XCTUnwrap(s[#"\#(enqueued)_sum{provider="apns"}"#])
        XCTAssertEqual(createdSum - enqueuedSum, 200, accuracy: 0.001)
        XCTAssertGreaterThanOrEqual(enqueuedSum, 30)
        // Both reach ten minutes, like every other latency the fleet reports.
        XCTAssertNotNil(s[#"\#(created)_bucket{provider="apns",le="600.0"}"#])
        XCTAssertNotNil(s[#"\#(enqueued)_bucket{provider="apns",le="600.0"}"#])
        XCTAssertNil(s.keys.first { $0.hasPrefix("pushfleet_enqueue_to_accepted_seconds") }, "the name that said neither is gone")

        // A retry of another notification, accepted on attempt 2: its wait on the tier is
        // not the intake clock, so it counts in created_to_accepted only.
        var headers = RetryHeaders()
        headers.attempt = 2
        var retry = DeliverySemanticsTests.message(createdAt: now.addingTimeInterval(-230), tokens: [DeliverySemanticsTests.token(232)],
                                                   offset: 1, topic: "push.retry.5s", headers: headers.kafkaHeaders)
        retry.timestamp = now.addingTimeInterval(-5)
        let second = try await pipeline.outcome(of: [retry])
        XCTAssertEqual(second.deliveries.map(\.status), [.accepted], "\(second.deliveries.map { $0.providerReason ?? "-" })")
        s = samples()
        XCTAssertEqual(s[#"\#(created)_count{provider="apns"}"#], 2, "a retry's acceptance counts from created_at")
        XCTAssertEqual(s[#"\#(enqueued)_count{provider="apns"}"#], 1, "but not from an intake message it did not come from")
        XCTAssertEqual(s[#"\#(enqueued)_sum{provider="apns"}"#], enqueuedSum)
        router.shutdown()
        try await stack.close()
    }
}
