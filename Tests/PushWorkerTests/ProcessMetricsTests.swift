import Foundation
import PushCore
import PushThreads
import XCTest

@testable import PushWorker

/// The process metrics (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `pushfleet_thread_cpu_seconds_total`)
/// and `ThreadCPU`, the `/proc` reading behind them and the benchmarks.
final class ProcessMetricsTests: XCTestCase {
    private var exposition: PrometheusExposition!
    private var metrics: WorkerMetrics!

    override func setUp() {
        exposition = PrometheusExposition()
        metrics = WorkerMetrics(factory: exposition.factory)
    }

    /// Series line (name plus labels) → value.
    private func values() -> [String: Double] {
        var result: [String: Double] = [:]
        for line in exposition.text().split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = value
        }
        return result
    }

    private func thread(_ role: String) -> Double? { values()["pushfleet_thread_cpu_seconds_total{thread=\"\(role)\"}"] }

    func testThreadNamesGiveTheirRoles() {
        let cases: [(String, String)] = [
            ("curl.multi", "curl"), ("send.executor", "sends"), ("pg.12", "postgres_client"), ("kafka.cons.poll", "kafka_threads"),
            ("kafka.prod.ctl", "kafka_threads"), ("rdk:broker1", "librdkafka"), ("rdk:main", "librdkafka"),
            ("NIO-ELT-0-#0", "nio"), ("oot.default-qos", "tasks"), ("-qos.overcommit", "tasks"),
            ("pushfleet", "main"), ("parent-watch", "other"), ("", "other"),
        ]
        for (name, role) in cases {
            XCTAssertEqual(ThreadCPU.role(threadName: name, processName: "pushfleet"), role, name)
        }
        XCTAssertTrue(cases.allSatisfy { ThreadCPU.roles.contains($0.1) })
    }

    func testAStatLineIsReadAroundANameWithSpacesAndParentheses() throws {
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 12 0 100 1000 200"
        let stat = try XCTUnwrap(ThreadCPU.parseStat(line))
        XCTAssertEqual(stat.name, "a (b) c")
        XCTAssertEqual(stat.cpuSeconds, 300 / hz, accuracy: 1e-9)
        XCTAssertEqual(stat.reapedChildrenCPUSeconds, 10 / hz, accuracy: 1e-9)
        // Truncated, without the name's parentheses, or with text where numbers go: no reading.
        XCTAssertNil(ThreadCPU.parseStat("4242 (x) S 1 2 3"))
        XCTAssertNil(ThreadCPU.parseStat("4242 x S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0"))
        XCTAssertNil(ThreadCPU.parseStat("4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 ten 50 7 3 20 0"))
        XCTAssertNil(ThreadCPU.parseStat(""))
    }

    /// Thread by thread: a thread that ends is not counted twice, and no series goes down.
    func testEachThreadIsCountedOnceAndNoSeriesGoesDown() throws {
        typealias Sample = ThreadCPU.Sample
        let name = "pushfleet"
        // Reading 1: the curl loop 4 s, a pool thread 2 s, a libpq thread 1 s; 0.5 s of threads already ended.
        metrics.exportProcess(Sample(processName: name, processCPUSeconds: 7.5, threads: [
            10: ("curl.multi", 4), 11: ("oot.default-qos", 2), 12: ("pg.1", 1),
        ]), residentBytes: 64 << 20)
        XCTAssertEqual(thread("curl"), 4)
        XCTAssertEqual(thread("tasks"), 2)
        XCTAssertEqual(thread("postgres_client"), 1)
        XCTAssertEqual(thread("exited"), 0.5)
        XCTAssertEqual(values()["process_cpu_seconds_total"], 7.5)
        XCTAssertEqual(values()["process_resident_memory_bytes"], Double(64 << 20))

        // Reading 2: the libpq thread ended after using 1.5 s in all (0.5 s since reading 1);
        // a pool thread started and ended in between (0.25 s); the curl loop went on to 5 s.
        metrics.exportProcess(Sample(processName: name, processCPUSeconds: 9.25, threads: [
            10: ("curl.multi", 5), 11: ("oot.default-qos", 2),
        ]), residentBytes: nil)
        XCTAssertEqual(thread("curl"), 5)
        XCTAssertEqual(thread("tasks"), 2)
        XCTAssertEqual(thread("postgres_client"), 1, "counted up to the last reading, never taken back")
        XCTAssertEqual(thread("exited"), 0.5 + 0.5 + 0.25)
        XCTAssertEqual(values()["process_cpu_seconds_total"], 9.25)
        let roles = ThreadCPU.roles.compactMap { thread($0) }.reduce(0, +)
        XCTAssertEqual(roles, 9.25, accuracy: 1e-9, "the roles add up to the process's total")

        // Reading 3: thread id 12 reused by a new Kafka thread; the same totals read again change nothing.
        metrics.exportProcess(Sample(processName: name, processCPUSeconds: 9.5, threads: [
            10: ("curl.multi", 5), 11: ("oot.default-qos", 2), 12: ("kafka.cons.poll", 0.25),
        ]), residentBytes: nil)
        metrics.exportProcess(Sample(processName: name, processCPUSeconds: 9.5, threads: [
            10: ("curl.multi", 5), 11: ("oot.default-qos", 2), 12: ("kafka.cons.poll", 0.25),
        ]), residentBytes: nil)
        XCTAssertEqual(thread("kafka_threads"), 0.25)
        XCTAssertEqual(thread("postgres_client"), 1)
        XCTAssertEqual(values()["process_cpu_seconds_total"], 9.5)
    }

    func testThisProcessIsReadFromProc() throws {
        #if !os(Linux)
        throw XCTSkip("/proc is Linux's")
        #else
        let named = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let worker = Thread {
            ThreadName.setCurrent("curl.test")
            // Busy until the kernel has charged this thread a few clock ticks.
            while (ThreadCPU.stat(path: "/proc/thread-self/stat")?.cpuSeconds ?? 1) < 0.03 {}
            named.signal()
            done.wait()
        }
        worker.start()
        named.wait()
        defer { done.signal() }
        let sample = try XCTUnwrap(ThreadCPU.sample())
        XCTAssertGreaterThan(sample.threads.count, 1)
        XCTAssertTrue(sample.threads.values.contains { $0.name == "curl.test" })
        XCTAssertEqual(sample.byRole.values.reduce(0, +), sample.processCPUSeconds, accuracy: 0.02)
        XCTAssertGreaterThan(try XCTUnwrap(ThreadCPU.residentBytes()), 1 << 20)
        metrics.exportProcess()
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(thread("curl")), 0.03, "the named thread's time, under its role")
        let roles = ThreadCPU.roles.compactMap { thread($0) }.reduce(0, +)
        XCTAssertEqual(roles, try XCTUnwrap(values()["process_cpu_seconds_total"]), accuracy: 0.05)
        XCTAssertGreaterThan(try XCTUnwrap(values()["process_resident_memory_bytes"]), Double(1 << 20))
        #endif
    }
}
