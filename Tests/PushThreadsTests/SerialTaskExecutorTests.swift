import Foundation
import PushCore
import PushThreads
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

    /// Answers resumed inside `holdingWakes` (as the curl thread resumes one
    /// loop turn's answers) all run once the hold ends: no wake-up is lost,
    /// whether the executor slept through the hold or not, nested holds too.
    func testJobsEnqueuedWhileWakesAreHeldAllRun() async throws {
        let executor = SerialTaskExecutor(name: "send.hold")
        let done = expectation(description: "every round finished")
        let rounds = Task {
            for round in 0..<300 {
                let count = 1 + round % 24
                let parked = Locked<[UnsafeContinuation<Void, Never>]>([])
                let names = await withTaskExecutorPreference(executor) {
                    await withTaskGroup(of: String?.self) { group in
                        for _ in 0..<count {
                            group.addTask {
                                await withUnsafeContinuation { c in parked.withLock { $0.append(c) } }
                                return ThreadName.current()
                            }
                        }
                        while parked.withLock({ $0.count }) < count { await Task.yield() }
                        let resumer = Thread {
                            if round % 3 != 0 { usleep(200) }  // mostly after the executor went to sleep
                            let all = parked.withLock { $0 }
                            SerialTaskExecutor.holdingWakes {
                                if round % 5 == 0 {
                                    SerialTaskExecutor.holdingWakes { for c in all.prefix(count / 2) { c.resume() } }
                                    for c in all.dropFirst(count / 2) { c.resume() }
                                } else {
                                    for c in all { c.resume() }
                                }
                            }
                        }
                        resumer.start()
                        var names: [String?] = []
                        for await name in group { names.append(name) }
                        return names
                    }
                }
                XCTAssertEqual(names.count, count, "round \(round)")
                XCTAssertEqual(Set(names.map { $0 ?? "unnamed" }), ["send.hold"], "round \(round)")
            }
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: 60)
        rounds.cancel()
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
