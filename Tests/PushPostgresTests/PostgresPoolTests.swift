import Foundation
import PushPostgres
import PushTestSupport
import XCTest

final class PostgresPoolTests: XCTestCase {
    private static func backendPID(_ connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query("SELECT pg_backend_pid() AS pid")
        return try XCTUnwrap(try rows.first?.int("pid"))
    }

    private static func terminate(_ pid: Int64) async throws {
        let admin = try await TestDatabase.connect()
        defer { admin.close() }
        let killed = try await admin.query("SELECT pg_terminate_backend($1::int) AS ok", [.int(pid)])
        XCTAssertEqual(try killed.first?.bool("ok"), true)
        // pg_terminate_backend only signals; wait until the backend is gone.
        for _ in 0..<100 {
            let alive = try await admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1::int", [.int(pid)])
            if try alive.first?.int("n") == 0 { return }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTFail("backend \(pid) did not exit")
    }

    func testPoolSurvivesAKilledBackendInUse() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let firstPID = try await pool.withConnection { connection in
            let pid = try await Self.backendPID(connection)
            try await Self.terminate(pid)
            let error = await expectPostgresError { try await connection.query("SELECT 1") }
            XCTAssertEqual(error?.isRetriable, true, "\(String(describing: error))")
            XCTAssertTrue(connection.isBroken)
            return pid
        }
        // The broken connection was dropped; the next use reconnects.
        let secondPID = try await pool.withConnection { try await Self.backendPID($0) }
        XCTAssertNotEqual(firstPID, secondPID)
        await pool.close()
    }

    func testPoolReplacesAnIdleConnectionWhoseBackendDied() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let firstPID = try await pool.withConnection { try await Self.backendPID($0) }
        try await Self.terminate(firstPID)
        // The checkout notices the dead socket, so no caller sees an error.
        let secondPID = try await pool.withConnection { try await Self.backendPID($0) }
        XCTAssertNotEqual(firstPID, secondPID)
        let thirdPID = try await pool.withConnection { try await Self.backendPID($0) }
        XCTAssertEqual(secondPID, thirdPID, "a healthy connection is reused")
        await pool.close()
    }

    func testWaitersQueueAndNeverShareAConnection() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 2, logger: TestDatabase.logger)
        let tracker = ConcurrencyTracker()
        let pids = try await withThrowingTaskGroup(of: Int64.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await pool.withConnection { connection in
                        tracker.enter(connection.id)
                        defer { tracker.leave(connection.id) }
                        try await connection.query("SELECT pg_sleep(0.01)")
                        return try await Self.backendPID(connection)
                    }
                }
            }
            var pids: Set<Int64> = []
            for try await pid in group { pids.insert(pid) }
            return pids
        }
        XCTAssertLessThanOrEqual(pids.count, 2)
        XCTAssertLessThanOrEqual(tracker.maxConcurrent, 2)
        XCTAssertFalse(tracker.sawSharing, "two tasks held the same connection at once")
        await pool.close()
    }

    /// A campaign's batches run at a lower task priority: waiting for a
    /// connection, they let a higher-priority caller go first, whenever it came.
    func testAHigherPriorityWaiterGetsTheNextFreeConnection() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let order = TakenOrder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            func use(_ name: String, priority: TaskPriority, sleep: Double = 0) {
                group.addTask(priority: priority) {
                    try await pool.withConnection { connection in
                        order.append(name)
                        if sleep > 0 { try await connection.query("SELECT pg_sleep(\(sleep))") }
                    }
                }
            }
            // Each caller is queued before the next starts: the order is the pool's, not the scheduler's.
            use("holder", priority: .low, sleep: 3)
            try await waitUntil("the holder has the connection") { order.names == ["holder"] }
            for n in 0..<5 {
                use("bulk \(n)", priority: .low)
                try await waitUntil("\(n + 1) callers waiting") { pool.waitingCount == n + 1 }
            }
            use("urgent", priority: .high)
            try await waitUntil("6 callers waiting") { pool.waitingCount == 6 }
            XCTAssertEqual(order.names, ["holder"], "everyone queued while the holder had the connection")
            try await group.waitForAll()
        }
        let taken = order.names
        XCTAssertEqual(taken.count, 7)
        XCTAssertEqual(Array(taken.prefix(2)), ["holder", "urgent"], "the urgent caller took the connection first: \(taken)")
        XCTAssertEqual(Array(taken.dropFirst(2)), (0..<5).map { "bulk \($0)" }, "the others in their order")
        await pool.close()
    }

    func testConnectionLeftInATransactionIsNotReused() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let firstPID = try await pool.withConnection { connection in
            try await connection.query("BEGIN")
            return try await Self.backendPID(connection)
        }
        let secondPID = try await pool.withConnection { connection in
            XCTAssertFalse(connection.isInTransaction)
            return try await Self.backendPID(connection)
        }
        XCTAssertNotEqual(firstPID, secondPID)
        await pool.close()
    }

    func testClosedPoolFailsCheckoutsAndWaiters() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let holding = Task {
            try await pool.withConnection { connection in
                try await connection.query("SELECT pg_sleep(0.5)")
            }
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        try await Task.sleep(nanoseconds: 100_000_000)
        await pool.close()
        let waiterError = await expectPostgresError { try await waiter.value }
        XCTAssertEqual(waiterError?.kind, .closed)
        _ = try await holding.value  // the caller in flight finishes normally
        let after = await expectPostgresError { try await pool.withConnection { _ in 1 } }
        XCTAssertEqual(after?.kind, .closed)
    }

    func testCancelledWaiterLeavesTheQueue() async throws {
        let pool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger)
        let holding = Task {
            try await pool.withConnection { connection in try await connection.query("SELECT pg_sleep(0.4)") }
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        try await Task.sleep(nanoseconds: 50_000_000)
        waiter.cancel()
        do {
            _ = try await waiter.value
            XCTFail("cancelled waiter should throw")
        } catch is CancellationError {}
        _ = try await holding.value
        let observed1 = try await pool.withConnection { _ in 7 }
        XCTAssertEqual(observed1, 7)
        await pool.close()
    }

    func testUnreachableServerFailsAfterRetries() async throws {
        let pool = PostgresPool(url: "postgresql://postgres@127.0.0.1:1/none?connect_timeout=1",
                                size: 1, logger: TestDatabase.logger, connectAttempts: 3)
        let started = Date()
        let error = await expectPostgresError { try await pool.withConnection { _ in 1 } }
        XCTAssertEqual(error?.kind, .connectionFailed)
        XCTAssertEqual(error?.isRetriable, true)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.3)  // 100 ms + 200 ms of backoff
        // The slot was given back: a second try fails the same way instead of hanging.
        let again = await expectPostgresError { try await pool.withConnection { _ in 1 } }
        XCTAssertEqual(again?.kind, .connectionFailed)
        await pool.close()
    }
}

/// Records how many callers hold connections at once.
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class ConcurrencyTracker: @unchecked Sendable {
    private let lock = NSLock()
    private var holders: Set<Int> = []
    private(set) var maxConcurrent = 0
    private(set) var sawSharing = false

    func enter(_ id: Int) {
        lock.withLock {
            if !holders.insert(id).inserted { sawSharing = true }
            maxConcurrent = max(maxConcurrent, holders.count)
        }
    }

    func leave(_ id: Int) {
        _ = lock.withLock { holders.remove(id) }
    }
}

/// The order callers took a connection in.
private final class TakenOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var taken: [String] = []

    func append(_ name: String) { lock.withLock { taken.append(name) } }
    var names: [String] { lock.withLock { taken } }
}
