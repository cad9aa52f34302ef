import Foundation
import PushKafka
import XCTest

/// A scan reads every partition to the end its fetch reaches and reports, per
/// partition, what it read against the end the broker reported. (On Tansu the
/// reported end falls short of the messages there; the broker tier checks that.)
final class PartitionScanTests: KafkaClusterTestCase, @unchecked Sendable {
    func testAScanReportsWhatItReadOfEachPartitionAgainstTheReportedEnd() async throws {
        try cluster.createTopic("scan-report", partitions: 3)
        let producer = try makeProducer()
        for i in 0..<7 { _ = try await producer.send(topic: "scan-report", key: nil, value: bytes("a\(i)"), partition: 0) }
        for i in 0..<2 { _ = try await producer.send(topic: "scan-report", key: nil, value: bytes("b\(i)"), partition: 2) }
        await producer.close()

        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: "scan-report", logger: logger)
        var read: [Int32: [Int64]] = [:]
        let report = try await reader.scan(topic: "scan-report", chunk: 3) { chunk in
            for m in chunk { read[m.partition, default: []].append(m.offset) }
            return true
        }
        XCTAssertEqual(read[0], Array(0..<7))
        XCTAssertEqual(read[2], [0, 1])
        XCTAssertEqual(report.map(\.partition.partition), [0, 1, 2], "every partition, also the empty one")
        XCTAssertTrue(report.allSatisfy(\.reachedEnd), "\(report)")
        XCTAssertEqual(report.map(\.end), [7, 0, 2])
        XCTAssertEqual(report.map(\.first), [0, nil, 0])
        XCTAssertEqual(report.map(\.last), [6, nil, 1])
        XCTAssertEqual(report.map(\.messages), [7, 0, 2])
        XCTAssertEqual(report.map(\.reportedEnd), [7, 0, 2], "the mock cluster reports the true end")
        XCTAssertEqual(report.map(\.pastReportedEnd), [0, 0, 0])
        XCTAssertEqual(report[0].description, "scan-report[0]: read 0…6 (7 messages) to the end at 7; the broker reported 0…7")

        // Stopped early: what was read is reported, and the end is not claimed.
        let early = try await reader.scan(topic: "scan-report", chunk: 2) { _ in false }
        XCTAssertFalse(early.allSatisfy(\.reachedEnd), "\(early)")
        XCTAssertTrue(early.contains { $0.description.contains("NOT to the end") }, "\(early)")
        await reader.close()
    }
}
