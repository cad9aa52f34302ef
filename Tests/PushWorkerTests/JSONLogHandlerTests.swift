import Foundation
import Logging
import PushCore
import XCTest

@testable import PushWorker

/// JSON log lines: parseable, escaped, metadata flattened, levels honoured.
final class JSONLogHandlerTests: XCTestCase {
    private final class Lines: Sendable {
        private let lines = Locked<[[UInt8]]>([])
        var sink: LogLineSink { LogLineSink { line in self.lines.withLock { $0.append(line) } } }
        var all: [[UInt8]] { lines.withLock { $0 } }
        func objects() throws -> [[String: Any]] {
            try all.map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line))
                return try XCTUnwrap(object as? [String: Any])
            }
        }
    }

    private func logger(_ lines: Lines, level: Logger.Level = .info, provider: Logger.MetadataProvider? = nil) -> Logger {
        var handler = JSONLogHandler(label: "pushfleet.test", level: level, sink: lines.sink, metadataProvider: provider)
        handler[metadataKey: "worker.id"] = "w-1"
        return Logger(label: "pushfleet.test") { _ in handler }
    }

    func testLineCarriesFieldsAndFlattenedMetadata() throws {
        let lines = Lines()
        let log = logger(lines, provider: Logger.MetadataProvider { ["trace.id": "abc"] })
        log.info("partitions assigned", metadata: [
            "kafka": ["partition": "3", "topic": "push.notifications"],
            "push.app": "shop", "worker.batch": "\(17)", "list": ["a", "b"],
        ])
        let object = try XCTUnwrap(try lines.objects().first)
        XCTAssertEqual(object["level"] as? String, "info")
        XCTAssertEqual(object["label"] as? String, "pushfleet.test")
        XCTAssertEqual(object["message"] as? String, "partitions assigned")
        XCTAssertEqual(object["source"] as? String, "PushWorkerTests")
        XCTAssertEqual(object["file"] as? String, "PushWorkerTests/JSONLogHandlerTests.swift")
        XCTAssertNotNil(object["line"] as? Int)
        let metadata = try XCTUnwrap(object["metadata"] as? [String: String])
        XCTAssertEqual(metadata, [
            "kafka.partition": "3", "kafka.topic": "push.notifications", "push.app": "shop",
            "worker.batch": "17", "worker.id": "w-1", "trace.id": "abc", "list": #"["a", "b"]"#,
        ])
        let timestamp = try XCTUnwrap(object["timestamp"] as? String)
        XCTAssertNotNil(timestamp.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression), timestamp)
        let line = try XCTUnwrap(lines.all.first)
        XCTAssertEqual(line.last, UInt8(ascii: "\n"))
        XCTAssertEqual(line.filter { $0 == UInt8(ascii: "\n") }.count, 1)
    }

    func testEscapingRoundTrips() throws {
        let lines = Lines()
        let nasty = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} Grüße 🚀 \u{2028}"
        logger(lines).warning("\(nasty)", metadata: ["push.reason": "\(nasty)", "key \"odd\"\n": "v"])
        XCTAssertEqual(lines.all.count, 1)
        let line = try XCTUnwrap(lines.all.first)
        XCTAssertFalse(line.dropLast().contains(where: { $0 < 0x20 }), "raw control bytes inside the line")
        let object = try XCTUnwrap(try lines.objects().first)
        XCTAssertEqual(object["message"] as? String, nasty)
        XCTAssertEqual(object["level"] as? String, "warning")
        let metadata = try XCTUnwrap(object["metadata"] as? [String: String])
        XCTAssertEqual(metadata["push.reason"], nasty)
        XCTAssertEqual(metadata["key \"odd\"\n"], "v")
    }

    func testLevelAndErrorHandling() throws {
        let lines = Lines()
        let log = logger(lines, level: .notice)
        log.info("dropped")
        log.debug("dropped too")
        log.error("kept", metadata: ["error": "boom"])
        let objects = try lines.objects()
        XCTAssertEqual(objects.count, 1)
        XCTAssertEqual(objects.first?["message"] as? String, "kept")
        XCTAssertEqual(objects.first?["level"] as? String, "error")
        XCTAssertEqual((objects.first?["metadata"] as? [String: String])?["error"], "boom")
    }

    func testConcurrentLoggersWriteWholeLines() async throws {
        let lines = Lines()
        let log = logger(lines)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<100 { log.info("line \(task).\(i)", metadata: ["n": "\(i)"]) }
                }
            }
        }
        let objects = try lines.objects()
        XCTAssertEqual(objects.count, 800)
        XCTAssertEqual(Set(objects.compactMap { $0["message"] as? String }).count, 800)
    }

    func testRedactedToken() {
        let token = "a1b2c3" + String(repeating: "f", count: 58)
        XCTAssertEqual(Redact.token(token), "a1b2c3…64")
        XCTAssertEqual(Redact.token("abc"), "…3")
        XCTAssertFalse(Redact.token(token).contains("ffff"))
    }
}
