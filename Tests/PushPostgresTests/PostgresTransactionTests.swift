import Foundation
@testable import PushPostgres
import XCTest

/// `transaction`, errors with SQLSTATE, cancellation.
final class PostgresTransactionTests: XCTestCase {
    struct Boom: Error {}

    func testThrowingBodyRollsBackAndReturningBodyCommits() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let table = TestDatabase.uniqueName("tx")
        try await connection.execute("CREATE TABLE \(table) (id int PRIMARY KEY)")

        do {
            try await connection.transaction { connection in
                try await connection.query("INSERT INTO \(table) VALUES (1), (2)")
                XCTAssertTrue(connection.isInTransaction)
                throw Boom()
            }
            XCTFail("expected Boom")
        } catch is Boom {}
        XCTAssertFalse(connection.isInTransaction)
        let observed1 = try await connection.query("SELECT count(*) AS n FROM \(table)").first?.int("n")
        XCTAssertEqual(observed1, 0)

        let value = try await connection.transaction { connection in
            try await connection.query("INSERT INTO \(table) VALUES ($1)", [.int(3)]).affectedRows
        }
        XCTAssertEqual(value, 1)
        let observed2 = try await connection.query("SELECT count(*) AS n FROM \(table)").first?.int("n")
        XCTAssertEqual(observed2, 1)
    }

    func testSwallowedErrorInsideTransactionIsNotReportedAsCommitted() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let table = TestDatabase.uniqueName("tx")
        try await connection.execute("CREATE TABLE \(table) (id int PRIMARY KEY)")
        let error = await expectPostgresError {
            try await connection.transaction { connection in
                try await connection.query("INSERT INTO \(table) VALUES (1)")
                _ = try? await connection.query("INSERT INTO \(table) VALUES (1)")  // 23505, swallowed
                return 0
            }
        }
        XCTAssertEqual(error?.sqlState, "25P02")
        let observed3 = try await connection.query("SELECT count(*) AS n FROM \(table)").first?.int("n")
        XCTAssertEqual(observed3, 0)
    }

    func testServerErrorsCarrySQLStateAndAreNotRetriable() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let table = TestDatabase.uniqueName("err")
        try await connection.execute("CREATE TABLE \(table) (id int PRIMARY KEY)")
        try await connection.query("INSERT INTO \(table) VALUES ($1)", [.int(1)])

        let unique = await expectPostgresError { try await connection.query("INSERT INTO \(table) VALUES ($1)", [.int(1)]) }
        XCTAssertEqual(unique?.sqlState, "23505")
        XCTAssertEqual(unique?.kind, .server)
        XCTAssertEqual(unique?.isRetriable, false)
        XCTAssertNotNil(unique?.detail)  // Key (id)=(1) already exists.
        XCTAssertTrue(unique?.description.contains("23505") ?? false)

        let missing = await expectPostgresError { try await connection.query("SELECT * FROM no_such_table_here") }
        XCTAssertEqual(missing?.sqlState, "42P01")
        XCTAssertEqual(missing?.isRetriable, false)

        let syntax = await expectPostgresError { try await connection.execute("SELEC 1") }
        XCTAssertEqual(syntax?.sqlState, "42601")

        let badInput = await expectPostgresError { try await connection.query("SELECT $1::int", [.text("x")]) }
        XCTAssertEqual(badInput?.sqlState, "22P02")

        // The connection is still fine afterwards.
        XCTAssertFalse(connection.isBroken)
        let observed4 = try await connection.query("SELECT 1 AS one").first?.int("one")
        XCTAssertEqual(observed4, 1)
    }

    func testRetriableClassification() {
        for state in ["40001", "40P01", "53300", "57P01", "57P02", "57P03", "08006", "08001"] {
            XCTAssertTrue(PostgresError.server(sqlState: state, message: "x").isRetriable, state)
        }
        for state in ["23505", "42P01", "22P02", "57014", "25P02"] {
            XCTAssertFalse(PostgresError.server(sqlState: state, message: "x").isRetriable, state)
        }
        XCTAssertTrue(PostgresError.connectionLost("gone").isRetriable)
        XCTAssertTrue(PostgresError.connectionFailed("refused").isRetriable)
        XCTAssertFalse(PostgresError.migration("changed").isRetriable)
        XCTAssertTrue(PostgresError.closed("x").file.hasSuffix("PostgresTransactionTests.swift"))
    }

    func testCancellingTheTaskCancelsTheStatement() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let started = Date()
        let task = Task { try await connection.query("SELECT pg_sleep(30)") }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let error = await expectPostgresError { try await task.value }
        XCTAssertEqual(error?.sqlState, "57014")  // query_canceled
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        let observed5 = try await connection.query("SELECT 2 AS two").first?.int("two")
        XCTAssertEqual(observed5, 2)
    }

    func testConnectFailureIsRetriableAndNamesTheProblem() async throws {
        // A port nobody listens on (bound and closed just now is good enough).
        let error = await expectPostgresError {
            try await PostgresConnection.connect(url: "postgresql://postgres@127.0.0.1:1/none?connect_timeout=2",
                                                 logger: TestDatabase.logger)
        }
        XCTAssertEqual(error?.kind, .connectionFailed)
        XCTAssertEqual(error?.isRetriable, true)
        XCTAssertFalse(error?.message.isEmpty ?? true)
    }

    func testClosedConnectionRefusesWork() async throws {
        let connection = try await TestDatabase.connect()
        connection.close()
        connection.close()
        XCTAssertTrue(connection.isBroken)
        let error = await expectPostgresError { try await connection.query("SELECT 1") }
        XCTAssertEqual(error?.kind, .closed)
    }

    func testApplicationNameAndSessionSettings() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let rows = try await connection.query(
            "SELECT current_setting('application_name') AS app, current_setting('TimeZone') AS tz, "
                + "current_setting('DateStyle') AS ds, current_setting('client_encoding') AS enc")
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row["app"], "pushfleet")
        XCTAssertEqual(row["tz"], "UTC")
        XCTAssertEqual(row["ds"], "ISO, YMD")
        XCTAssertEqual(row["enc"], "UTF8")
    }

    /// Each connection owns one thread; closing (or dropping) it ends the thread.
    /// The executor object is kept alive by its own thread's closure until that
    /// thread's loop returns, so a weak reference going nil means the thread ended
    /// (counting /proc/self/task instead raced with the concurrency pool's threads).
    func testClosingConnectionsEndsTheirThreads() async throws {
        final class WeakBox: @unchecked Sendable { weak var executor: BlockingExecutor? }
        var connections: [PostgresConnection] = []
        var boxes: [WeakBox] = []
        for _ in 0..<10 {
            let connection = try await TestDatabase.connect()
            let box = WeakBox()
            box.executor = connection.executor
            boxes.append(box)
            connections.append(connection)
        }
        XCTAssertEqual(boxes.filter { $0.executor != nil }.count, 10)
        for connection in connections.prefix(5) { connection.close() }
        connections.removeAll()  // the other five are only dropped
        for _ in 0..<250 where boxes.contains(where: { $0.executor != nil }) {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(boxes.filter { $0.executor != nil }.count, 0, "executor threads still running")
    }
}
