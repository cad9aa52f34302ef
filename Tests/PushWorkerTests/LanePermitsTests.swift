import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// The lanes share the delivery bound unequally: interactive work is served
/// first and always finds its reserve free; a campaign always keeps its floor.
final class LanePermitsTests: XCTestCase {
    func testBulkNeverTakesTheInteractiveReserve() {
        var state = DeliveryPermits.State(capacity: 100, bulkFloor: 25, interactiveReserve: 25)
        XCTAssertEqual(state.laneCapacity(.bulk), 75)
        XCTAssertEqual(state.cost(1_000, lane: .bulk), 75, "a wide bulk part takes all bulk may hold")
        XCTAssertTrue(state.tryTake(75, lane: .bulk))
        XCTAssertFalse(state.tryTake(1, lane: .bulk), "the last 25 are the interactive lane's")
        XCTAssertTrue(state.tryTake(25, lane: .interactive), "a one-time code finds room at once")
        XCTAssertEqual(state.inUse, 100)
    }

    func testBulkKeepsItsFloorHoweverBusyInteractiveWorkIs() {
        var state = DeliveryPermits.State(capacity: 100, bulkFloor: 25, interactiveReserve: 25)
        XCTAssertTrue(state.tryTake(100, lane: .interactive), "nobody else wants any: all of it")
        state.enqueue(id: 1, 25, lane: .bulk)
        state.enqueue(id: 2, 50, lane: .interactive)
        XCTAssertEqual(state.release(40, lane: .interactive), [1], "the bulk waiter gets its floor before more interactive work")
        XCTAssertFalse(state.tryTake(20, lane: .interactive), "an interactive waiter is ahead")
        XCTAssertEqual(state.release(35, lane: .interactive), [2])
        XCTAssertEqual(state.held[.bulk], 25)
        XCTAssertEqual(state.held[.interactive], 75)
    }

    func testBeyondItsFloorBulkGetsOnlyWhatInteractiveWorkLeaves() {
        var state = DeliveryPermits.State(capacity: 100, bulkFloor: 20, interactiveReserve: 10)
        XCTAssertTrue(state.tryTake(50, lane: .interactive))
        XCTAssertTrue(state.tryTake(20, lane: .bulk), "within its floor")
        XCTAssertTrue(state.tryTake(30, lane: .bulk), "50 + 50: interactive holds its 50, bulk the rest")
        XCTAssertEqual(state.release(50, lane: .bulk), [])
        state.enqueue(id: 7, 40, lane: .interactive)  // interactive wants 90 in all now
        XCTAssertFalse(state.tryTake(25, lane: .bulk), "over its floor, and interactive waits for more")
        XCTAssertTrue(state.tryTake(10, lane: .bulk), "its floor still")
        XCTAssertEqual(state.admitWaiting(), [], "bulk holds 10 of its floor of 20: interactive leaves it the other 10")
        XCTAssertEqual(state.release(10, lane: .bulk), [7], "bulk wants nothing now: interactive takes what it waited for")
    }

    func testTheInteractiveWaiterIsAdmittedBeforeAnEarlierBulkOne() {
        var state = DeliveryPermits.State(capacity: 100, bulkFloor: 10, interactiveReserve: 0)
        XCTAssertTrue(state.tryTake(10, lane: .bulk))
        XCTAssertTrue(state.tryTake(90, lane: .interactive))
        state.enqueue(id: 1, 30, lane: .bulk)
        state.enqueue(id: 2, 30, lane: .interactive)
        XCTAssertEqual(state.release(40, lane: .interactive), [2], "interactive first; bulk's 30 no longer fits")
        XCTAssertEqual(state.release(50, lane: .interactive), [1])
    }

    func testThePartBudgetsFollowTheLanes() {
        let permits = DeliveryPermits(capacity: 20_000, bulkFloor: 5_000, interactiveReserve: 5_000)
        XCTAssertEqual(permits.partBudget(for: .interactive), 10_000)
        XCTAssertEqual(permits.partBudget(for: .bulk), 5_000, "a campaign's part fits its floor")
    }

    func testAShareOfTheQuotaFollowsTheShareOfPartitions() {
        XCTAssertEqual(QuotaShare.of(owned: 6, total: 24), 0.25)
        XCTAssertEqual(QuotaShare.of(owned: 0, total: 24), 0)
        XCTAssertEqual(QuotaShare.of(owned: 3, total: 0), 0, "nothing known: nothing claimed")
        XCTAssertEqual(QuotaShare.of(owned: 30, total: 24), 1, "never more than the whole")
    }
}
