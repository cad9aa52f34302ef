import Foundation
import PushKafka
import XCTest

/// `pushfleet skip` against the mock cluster: the binary dead-letters one message
/// with the operator's reason and origin headers and moves the group past it.
final class SkipCommandTests: KafkaClusterTestCase, @unchecked Sendable {
    let intake = "push.notifications"
    let dlq = "push.dlq"

    override func setUp() async throws {
        try await super.setUp()
        try cluster.createTopic(intake, partitions: 3)
        try cluster.createTopic(dlq, partitions: 1)
    }

    /// A group that had members (the mock refuses simple commits for it; the tool then
    /// commits as the group's only member): dead letter written once, offset moved, and
    /// a second run says there is nothing to do.
    func testSkipDeadLettersTheMessageAndCommitsPastIt() async throws {
        let producer = try makeProducer()
        for i in 0..<3 { _ = try await producer.send(topic: intake, key: bytes("k\(i)"), value: bytes("poison-\(i)"), partition: 1) }
        await producer.close()
        // The workers' group existed and is now empty (scaled to 0).
        let former = try makeConsumer(group: "skip-group", topics: [intake], extra: ["partition.assignment.strategy": "roundrobin"])
        _ = try await pollUntil([former], timeout: .seconds(30)) { !(try former.assignment()).isEmpty }
        await former.close()

        let run = try runSkip(["--partition", "1", "--offset", "1", "--group", "skip-group", "--reason", "crashes the decoder"])
        XCTAssertEqual(run.status, 0, run.output)
        let letters = try await readDLQ(count: 1)
        XCTAssertEqual(letters.count, 1, run.output)
        let letter = try XCTUnwrap(letters.first)
        XCTAssertEqual(text(letter.value), "poison-1")
        XCTAssertEqual(letter.key.map(text), "k1")
        XCTAssertEqual(letter.header("pushfleet-dlq-reason").map(text), "skipped by operator: crashes the decoder")
        XCTAssertEqual(letter.header("pushfleet-origin-topic").map(text), intake)
        XCTAssertEqual(letter.header("pushfleet-origin-partition").map(text), "1")
        XCTAssertEqual(letter.header("pushfleet-origin-offset").map(text), "1")
        XCTAssertNil(letter.header("pushfleet-dlq-body"))
        let committedOffset = try await committed(group: "skip-group", partition: 1)
        XCTAssertEqual(committedOffset, 2)

        let again = try runSkip(["--partition", "1", "--offset", "1", "--group", "skip-group"])
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertTrue(again.output.contains("nothing to do"), again.output)
        // A fresh reader's group join takes seconds on a loaded machine: wait for the
        // first letter, then two seconds more for a second one (all are on one partition).
        let reader = try makeConsumer(group: "dlq-reader-\(UUID().uuidString)", topics: [dlq],
                                      extra: ["partition.assignment.strategy": "roundrobin"])
        var firstAt: ContinuousClock.Instant?
        let lettersAfter = try await collect(reader, timeout: .seconds(30)) { messages in
            if firstAt == nil, !messages.isEmpty { firstAt = .now }
            return messages.count >= 2 || firstAt.map { ContinuousClock.now - $0 > .seconds(2) } == true
        }
        await reader.close()
        XCTAssertEqual(lettersAfter.count, 1, "no second dead letter")
    }

    /// A body over --dlq-max-bytes is dead-lettered truncated, saying so; a group that never
    /// had members takes the simple commit.
    func testOversizedMessageIsTruncated() async throws {
        let producer = try makeProducer()
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 300_000)
        _ = try await producer.send(topic: intake, key: nil, value: big, partition: 0)
        await producer.close()

        let run = try runSkip(["--partition", "0", "--offset", "0", "--group", "fresh-group", "--dlq-max-bytes", "100000"])
        XCTAssertEqual(run.status, 0, run.output)
        let letters = try await readDLQ(count: 1)
        let letter = try XCTUnwrap(letters.first, run.output)
        XCTAssertEqual(letter.header("pushfleet-dlq-body").map(text), "truncated 300000")
        XCTAssertLessThan(letter.value.count, 100_000)
        XCTAssertGreaterThan(letter.value.count, 90_000)
        XCTAssertEqual(letter.header("pushfleet-dlq-reason").map(text), "skipped by operator")
        let committedOffset = try await committed(group: "fresh-group", partition: 0)
        XCTAssertEqual(committedOffset, 1)
    }

    /// While a worker owns partitions of the topic the tool refuses and says to scale to 0;
    /// the group's offset does not move.
    func testActiveGroupIsRefused() async throws {
        let producer = try makeProducer()
        _ = try await producer.send(topic: intake, key: nil, value: bytes("stuck"), partition: 2)
        await producer.close()
        let worker = try makeConsumer(group: "busy-group", topics: [intake], extra: ["partition.assignment.strategy": "roundrobin"])
        _ = try await pollUntil([worker], timeout: .seconds(30)) { !(try worker.assignment()).isEmpty }
        // Keep the member alive (polling) while the tool runs.
        let polling = Task {
            while !Task.isCancelled { _ = try? await worker.poll(maxMessages: 10, timeout: .milliseconds(100)) }
        }
        let run = try runSkip(["--partition", "2", "--offset", "0", "--group", "busy-group"])
        polling.cancel()
        _ = await polling.result
        await worker.close()
        XCTAssertNotEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("Scale the workers to 0"), run.output)
        let committedOffset = try await committed(group: "busy-group", partition: 2)
        XCTAssertNil(committedOffset)
    }

    // MARK: - Helpers

    struct Run { var status: Int32; var output: String }

    private func runSkip(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try pushfleetBinary())
        process.arguments = ["skip", "--bootstrap-servers", cluster.bootstrapServers, "--topic", intake, "--log-level", "warning"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHFLEET_") }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    private func pushfleetBinary() throws -> String {
        if let explicit = ProcessInfo.processInfo.environment["PUSHFLEET_BIN"] { return explicit }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("pushfleet").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let fallback = FileManager.default.currentDirectoryPath + "/.build/debug/pushfleet"
        guard FileManager.default.isExecutableFile(atPath: fallback) else {
            throw XCTSkip("pushfleet binary not found next to the tests; swift build first or set PUSHFLEET_BIN")
        }
        return fallback
    }

    private func readDLQ(count: Int, timeout: Duration = .seconds(20)) async throws -> [KafkaMessage] {
        let reader = try makeConsumer(group: "dlq-reader-\(UUID().uuidString)", topics: [dlq],
                                      extra: ["partition.assignment.strategy": "roundrobin"])
        let messages = try await collect(reader, timeout: timeout) { $0.count >= count }
        await reader.close()
        return messages
    }

    private func committed(group: String, partition: Int32) async throws -> Int64? {
        let reader = try KafkaPartitionReader(bootstrapServers: cluster.bootstrapServers, groupID: group, logger: logger)
        let offset = try await reader.committedOffset(KafkaTopicPartition(topic: intake, partition: partition))
        await reader.close()
        return offset
    }
}
