import XCTest
@testable import PushCore

final class OffsetTrackerTests: XCTestCase {
    func testStoresOnlyTheContiguousPrefix() {
        var t = PartitionOffsetTracker()
        for o in 10...14 { XCTAssertTrue(t.begin(Int64(o))) }
        XCTAssertNil(t.complete(12))
        XCTAssertNil(t.complete(11))
        XCTAssertEqual(t.complete(10), 13)
        XCTAssertNil(t.complete(14 + 100))
        XCTAssertEqual(t.complete(14), nil)
        XCTAssertEqual(t.complete(13), 15)
        XCTAssertEqual(t.inFlight, 0)
    }

    func testGapsInOffsetsAreFine() {
        var t = PartitionOffsetTracker()
        t.begin(5); t.begin(9); t.begin(20)
        XCTAssertNil(t.complete(9))
        XCTAssertEqual(t.complete(5), 10)
        XCTAssertEqual(t.complete(20), 21)
    }

    func testRejectsOutOfOrderAndDoubleCompletion() {
        var t = PartitionOffsetTracker()
        XCTAssertTrue(t.begin(3))
        XCTAssertFalse(t.begin(3))
        XCTAssertFalse(t.begin(2))
        XCTAssertEqual(t.complete(3), 4)
        XCTAssertNil(t.complete(3))
        XCTAssertFalse(t.begin(1))
        XCTAssertTrue(t.begin(4))
    }

    /// Property: for any completion order, the stored offset never passes an
    /// incomplete offset, and after everything completes it is last + 1.
    func testRandomCompletionOrdersNeverSkip() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var t = PartitionOffsetTracker()
            let count = Int.random(in: 1...300, using: &rng)
            var offsets: [Int64] = []
            var next: Int64 = Int64.random(in: 0...1000, using: &rng)
            for _ in 0..<count {
                next += Int64.random(in: 1...3, using: &rng)
                offsets.append(next)
                t.begin(next)
            }
            var pending = Set(offsets)
            var lastStored: Int64 = -1
            for o in offsets.shuffled(using: &rng) {
                pending.remove(o)
                if let stored = t.complete(o) {
                    XCTAssertGreaterThan(stored, lastStored)
                    lastStored = stored
                    XCTAssertTrue(pending.allSatisfy { $0 >= stored }, "stored \(stored) passes a pending offset")
                }
            }
            XCTAssertEqual(lastStored, offsets.last! + 1)
            XCTAssertEqual(t.inFlight, 0)
        }
    }

    func testResetForgetsInFlight() {
        var t = PartitionOffsetTracker()
        t.begin(1); t.begin(2)
        t.reset()
        XCTAssertEqual(t.inFlight, 0)
        XCTAssertNil(t.complete(1))
    }
}
