import Foundation
import PushCore
import XCTest
@testable import PushThreads

/// The kernel names our threads give themselves: what `top -H`, `perf` and
/// `bench pipeline`'s CPU by thread role read.
final class ThreadNameTests: XCTestCase {
    /// Runs `body` on a new Foundation thread and returns what it returned.
    private func onNewThread(_ body: @escaping @Sendable () -> [String?]) -> [String?] {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<[String?]>([])
        let thread = Thread {
            result.withLock { $0 = body() }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0 }
    }

    func testANameIsWhatTheKernelShowsForThatThreadOnly() throws {
        #if !os(Linux)
        throw XCTSkip("thread names are read from /proc")
        #else
        let before = ThreadName.current()
        let names = onNewThread {
            let inherited = ThreadName.current()
            ThreadName.setCurrent("tn.test.one")
            let named = ThreadName.current()
            // Every thread of the process, as /proc lists them: one carries the name.
            let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            let carrying = tids.filter {
                (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) == "tn.test.one\n"
            }
            return [inherited, named, String(carrying.count)]
        }
        XCTAssertEqual(names[0], before, "a new thread starts with its creator's name")
        XCTAssertEqual(names[1], "tn.test.one")
        XCTAssertEqual(names[2], "1", "the name is the kernel's (in /proc), on that one thread")
        XCTAssertEqual(ThreadName.current(), before, "naming one thread leaves the others alone")
        #endif
    }

    func testALongNameIsCutToTheKernelsFifteenBytes() throws {
        #if !os(Linux)
        throw XCTSkip("thread names are read from /proc")
        #else
        let names = onNewThread {
            ThreadName.setCurrent("kafka.consumer.control")
            return [ThreadName.current()]
        }
        XCTAssertEqual(names[0], "kafka.consumer.")
        XCTAssertEqual(names[0]?.utf8.count, ThreadName.maximumBytes)
        #endif
    }
}
