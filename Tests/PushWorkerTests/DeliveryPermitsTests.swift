import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// The bound on deliveries in flight: first come, first served; a request
/// larger than the capacity takes all of it; a cancelled waiter leaves
/// nothing held and lets the next one in.
final class DeliveryPermitsTests: XCTestCase {
    func testWaitersAreAdmittedInOrderAndNoneJumpsTheQueue() {
        var state = DeliveryPermits.State(capacity: 100)
        XCTAssertTrue(state.tryTake(60))
        XCTAssertFalse(state.tryTake(50), "does not fit")
        state.enqueue(id: 1, 50)
        XCTAssertFalse(state.tryTake(10), "fits, but someone waits ahead")
        state.enqueue(id: 2, 10)
        XCTAssertEqual(state.release(5), [], "45 free: the head (50) still waits, and the one behind it with it")
        XCTAssertEqual(state.release(15), [1, 2], "both fit once 60 are free, in order")
        XCTAssertEqual(state.inUse, 100)
        XCTAssertEqual(state.waiters, 0)
    }

    func testARequestOverTheCapacityTakesAllOfItAlone() {
        var state = DeliveryPermits.State(capacity: 100)
        XCTAssertEqual(state.cost(11_000), 100)
        XCTAssertEqual(state.cost(-5), 0, "a negative count costs nothing")
        XCTAssertTrue(state.tryTake(11_000))
        XCTAssertEqual(state.inUse, 100)
        XCTAssertFalse(state.tryTake(1))
        state.enqueue(id: 7, 1)
        XCTAssertEqual(state.release(100), [7])
    }

    func testACancelledWaiterIsRemovedAndTheNextIsAdmitted() {
        var state = DeliveryPermits.State(capacity: 10)
        XCTAssertTrue(state.tryTake(6))
        state.enqueue(id: 1, 8)
        state.enqueue(id: 2, 4)
        XCTAssertTrue(state.cancel(id: 1))
        XCTAssertFalse(state.cancel(id: 1), "gone already")
        XCTAssertEqual(state.admitWaiting(), [2])
        XCTAssertEqual(state.inUse, 10)
    }

    /// The async side: a waiter parks until a release, a cancelled one throws
    /// and holds nothing, and what was released is available again.
    func testAcquireWaitsForAReleaseAndCancellationHoldsNothing() async throws {
        let permits = DeliveryPermits(capacity: 100)
        let first = try await permits.acquire(80)
        XCTAssertEqual(first, 80)
        let admitted = Locked(false)
        let waiter = Task {
            let n = try await permits.acquire(50)
            admitted.withLock { $0 = true }
            return n
        }
        let cancelled = Task { try await permits.acquire(30) }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertFalse(admitted.withLock { $0 }, "50 do not fit while 80 of 100 are held")
        cancelled.cancel()
        do {
            _ = try await cancelled.value
            XCTFail("a cancelled waiter must throw")
        } catch is CancellationError {}
        permits.release(first)
        let second = try await waiter.value
        XCTAssertEqual(second, 50)
        XCTAssertEqual(permits.inUse, 50, "the cancelled waiter holds nothing")
        permits.release(second)
        XCTAssertEqual(permits.inUse, 0)
        let all = try await permits.acquire(1_000_000)
        XCTAssertEqual(all, 100, "larger than the capacity: all of it")
        permits.release(all)
    }

    /// Many tasks at once: the permits in use never pass the capacity and all get through.
    func testUnderContentionTheCapacityIsNeverPassed() async throws {
        let permits = DeliveryPermits(capacity: 50)
        let peak = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let n = try await permits.acquire(1 + i % 20)
                    let now = permits.inUse
                    peak.withLock { $0 = max($0, now) }
                    await Task.yield()
                    permits.release(n)
                }
            }
            try await group.waitForAll()
        }
        XCTAssertLessThanOrEqual(peak.withLock { $0 }, 50)
        XCTAssertGreaterThan(peak.withLock { $0 }, 0)
        XCTAssertEqual(permits.inUse, 0)
    }
}
