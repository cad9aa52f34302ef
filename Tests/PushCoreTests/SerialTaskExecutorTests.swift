import Foundation
import PushCore
import XCTest

/// The send executor: tasks that prefer it, and their children, run on its one
/// thread, also after an answer resumes them from another thread (as the curl
/// thread does), and none is lost under many at once.
final class SerialTaskExecutorTests: XCTestCase {
    func testChildTasksRunOnItsThreadAndResumeThereFromAnotherThread() async throws {
        let executor = SerialTaskExecutor(name: "send.test")
        let names = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: [String?].self) { group in
                for i in 0..<2_000 {
                    group.addTask {
                        let before = ThreadName.current()
                        // Suspended, then resumed from a thread of its own, like an answer from curl.
                        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                            if i % 100 == 0 {
                                Thread { continuation.resume() }.start()
                            } else {
                                DispatchQueue.global().async { continuation.resume() }
                            }
                        }
                        return [before, ThreadName.current()]
                    }
                }
                var all: [String?] = []
                for await pair in group { all += pair }
                return all
            }
        }
        XCTAssertEqual(names.count, 4_000, "every task finished")
        XCTAssertEqual(Set(names.map { $0 ?? "unnamed" }), ["send.test"])

        // A child that asks for the global pool leaves the executor's thread.
        let elsewhere = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: String?.self) { group in
                group.addTask(executorPreference: globalConcurrentExecutor) { ThreadName.current() }
                return await group.next() ?? nil
            }
        }
        XCTAssertNotEqual(elsewhere, "send.test")
    }

    /// The batch's sends choose per child: keep the executor, or spread to the
    /// pool (Web Push's sealing). The helper exists because an explicit `nil`
    /// preference keeps the executor only in unoptimised builds: compiled with
    /// `-O` (Swift 6.3.1) it drops it, which sent the release worker's sends to
    /// the pool. The tests build unoptimised, so they cannot show that case.
    func testAChildKeepsTheExecutorUnlessItSpreads() async throws {
        let executor = SerialTaskExecutor(name: "send.spread")
        let placed = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: (Int, String?).self) { group in
                for i in 0..<200 {
                    group.addTask(spreadingToGlobalPool: i % 4 == 0) {
                        await Task.yield()
                        return (i, ThreadName.current())
                    }
                }
                var all: [Int: String?] = [:]
                for await (i, name) in group { all[i] = name }
                return all
            }
        }
        XCTAssertEqual(placed.count, 200, "every child finished")
        for i in 0..<200 where i % 4 != 0 {
            XCTAssertEqual(placed[i] ?? nil, "send.spread", "child \(i) kept the executor")
        }
        for i in stride(from: 0, to: 200, by: 4) {
            XCTAssertNotEqual(placed[i] ?? nil, "send.spread", "child \(i) spread to the pool")
        }
    }

    /// Jobs run in the order they were enqueued: tasks started one after the
    /// other (each enqueued before the next starts) append in that order.
    func testTasksStartInTheOrderTheyWereEnqueued() async throws {
        let executor = SerialTaskExecutor(name: "send.order")
        let order = Locked<[Int]>([])
        await withTaskExecutorPreference(executor) {
            await withDiscardingTaskGroup { group in
                for i in 0..<500 {
                    group.addTask { order.withLock { $0.append(i) } }
                }
            }
        }
        XCTAssertEqual(order.withLock { $0 }, Array(0..<500))
    }
}
