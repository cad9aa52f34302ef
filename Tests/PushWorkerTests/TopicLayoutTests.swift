import Foundation
import PushCore
import PushKafka
import PushTestSupport
import XCTest
@testable import PushWorker

/// `pushfleet topics create` (issue 17): the layout it creates, and what it
/// does on a real multi-broker cluster (librdkafka's mock) that already has
/// some of the topics.
final class TopicLayoutTests: XCTestCase {
    func testTheLayoutMatchesTheWorkersTopicsAndTheScriptsDefaults() {
        var layout = TopicLayout()
        layout.prefix = "acme"
        let specs = layout.specs
        XCTAssertEqual(specs.map(\.name), ["acme.notifications", "acme.retry.5s", "acme.retry.1m", "acme.retry.10m", "acme.parked",
                                           "acme.notifications.bulk", "acme.retry.5s.bulk", "acme.retry.1m.bulk",
                                           "acme.retry.10m.bulk", "acme.parked.bulk",
                                           "acme.dlq", "acme.receipts", "acme.devices"])
        // Every topic a worker consumes, in either lane, is in the layout, and nothing else.
        let names = TopicNames(prefix: "acme", tiers: RetryTier.defaults)
        let consumed = Set(Lane.allCases.flatMap { names.consumed(by: $0) })
        XCTAssertTrue(consumed.isSubset(of: Set(specs.map(\.name))))
        XCTAssertEqual(Set(names.all), Set(specs.map(\.name)))
        XCTAssertEqual(specs.first { $0.name == "acme.dlq" }?.configs["retention.ms"], "2592000000", "30 days")
        XCTAssertEqual(specs.first { $0.name == "acme.dlq" }?.partitions, 3)
        XCTAssertEqual(specs.first { $0.name == "acme.devices" }?.configs["cleanup.policy"], "compact")
        XCTAssertEqual(Set(specs.compactMap { $0.configs["min.insync.replicas"] }), ["2"])
        layout.minInsyncReplicas = 4
        XCTAssertEqual(layout.problem, "min.insync.replicas must be 1...3")
        layout.minInsyncReplicas = nil
        layout.replicationFactor = 1
        XCTAssertEqual(Set(layout.specs.compactMap { $0.configs["min.insync.replicas"] }), ["1"])
    }

    func testOnAClusterWithSomeTopicsOnlyTheMissingOnesAreCreatedAndShortOnesReported() async throws {
        let logger = MigratedDatabase.logger
        let cluster = try KafkaMockCluster(brokers: 3, logger: logger)
        var layout = TopicLayout()
        layout.replicationFactor = 1
        for spec in layout.specs where spec.name != "push.devices" {
            try cluster.createTopic(spec.name, partitions: spec.name == "push.retry.10m" ? 4 : spec.partitions)
        }
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: logger)
        let existing = try await admin.topics()
        XCTAssertEqual(existing["push.notifications"], 12)
        XCTAssertNil(existing["push.devices"], "listing all topics must not auto-create one")
        let plan = layout.plan(existing: existing)
        XCTAssertEqual(plan.create.map(\.name), ["push.devices"])
        XCTAssertEqual(plan.present.count, 12)
        XCTAssertEqual(plan.short.map(\.name), ["push.retry.10m"])
        // librdkafka 2.0.2's mock cluster has no CreateTopics handler: the request
        // must fail with an error naming it within the timeout, never hang or report success.
        do {
            let results = try await admin.create(plan.create, timeout: .seconds(5))
            XCTAssertNotNil(results["push.devices"] ?? nil, "the mock cannot have created it: \(results)")
        } catch let error as KafkaError {
            // The mock has no controller for the Admin API: librdkafka gives up waiting for one.
            XCTAssertTrue("\(error)".contains("CreateTopics"), "\(error)")
        }
        await admin.close()
    }
}
